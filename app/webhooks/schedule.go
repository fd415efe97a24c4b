package webhooks

import (
	"math/rand/v2"
	"time"
)

// Schedule is how long to wait after each failed attempt before the next:
// Delays[i] after attempt i+1. After the last delay's attempt fails, the
// delivery is failed (an operator may retry it).
type Schedule struct {
	Delays []time.Duration
	// Jitter spreads each delay by ±Jitter (0.2: ±20 %), so receivers
	// coming back from an outage are not hit by every retry at once.
	Jitter float64
}

// DefaultSchedule is Standard Webhooks' (Svix's) schedule: 5 s, 5 min,
// 30 min, 2 h, 5 h, 10 h, 10 h, ±20 %: 8 attempts over about 27.6 hours
// (never less, see Next), so a receiver down for a day still gets every
// event.
func DefaultSchedule() Schedule {
	return Schedule{
		Delays: []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour},
		Jitter: 0.2,
	}
}

// Attempts is the most attempts a delivery gets.
func (s Schedule) Attempts() int { return len(s.Delays) + 1 }

// Span is the delays' sum without jitter: how long a delivery is retried.
func (s Schedule) Span() time.Duration {
	var total time.Duration
	for _, d := range s.Delays {
		total += d
	}
	return total
}

// Next is when to try again after attempt (1 for the first) failed at now;
// false when that was the last attempt. created is when the event was
// queued: the last attempt is never due before created+Span, so jitter
// (which could take 20 % off every delay: 22 h of the default 27.6) never
// shortens the promised retry window (at least 24 h by default).
func (s Schedule) Next(attempt int, created, now time.Time) (time.Time, bool) {
	if attempt < 1 || attempt > len(s.Delays) {
		return time.Time{}, false
	}
	d := float64(s.Delays[attempt-1])
	if s.Jitter > 0 {
		d *= 1 + s.Jitter*(2*rand.Float64()-1)
	}
	next := now.Add(time.Duration(d))
	if floor := created.Add(s.Span()); attempt == len(s.Delays) && next.Before(floor) {
		next = floor
	}
	return next, true
}
