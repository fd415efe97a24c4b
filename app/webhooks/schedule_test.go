package webhooks

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDefaultScheduleDelaysAndJitter(t *testing.T) {
	s := DefaultSchedule()
	require.Equal(t, 8, s.Attempts())
	require.Equal(t, 27*time.Hour+35*time.Minute+5*time.Second, s.Span())

	created := time.Unix(1_800_000_000, 0)
	for attempt := 1; attempt <= 6; attempt++ {
		base := s.Delays[attempt-1]
		for range 50 {
			next, ok := s.Next(attempt, created, created)
			require.True(t, ok)
			d := next.Sub(created)
			require.GreaterOrEqual(t, d, time.Duration(float64(base)*0.8))
			require.LessOrEqual(t, d, time.Duration(float64(base)*1.2))
		}
	}
	_, ok := s.Next(8, created, created)
	require.False(t, ok, "after the 8th attempt: failed")
	_, ok = s.Next(0, created, created)
	require.False(t, ok)
}

// Every delay jittered down by 20 % would end the retries after 22 h; the
// last attempt waits for the schedule's span, so the window is kept.
func TestLastAttemptKeepsTheRetryWindow(t *testing.T) {
	s := DefaultSchedule()
	created := time.Unix(1_800_000_000, 0)
	shortest := time.Duration(float64(s.Span()-s.Delays[6]) * 0.8)
	for range 50 {
		next, ok := s.Next(7, created, created.Add(shortest))
		require.True(t, ok)
		require.False(t, next.Before(created.Add(s.Span())))
		require.Greater(t, next.Sub(created), 24*time.Hour)
	}
	// Late enough already: the jittered delay stands.
	late := created.Add(s.Span())
	next, ok := s.Next(7, created, late)
	require.True(t, ok)
	require.GreaterOrEqual(t, next.Sub(late), 8*time.Hour)
}

func TestScheduleWithoutJitterIsExact(t *testing.T) {
	s := Schedule{Delays: []time.Duration{time.Second, time.Minute}}
	now := time.Unix(1_800_000_000, 0)
	next, ok := s.Next(1, now.Add(-time.Hour), now)
	require.True(t, ok)
	require.Equal(t, now.Add(time.Second), next)
}
