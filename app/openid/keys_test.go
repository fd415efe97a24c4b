package openid

import (
	"testing"
	"time"
)

// TestSigningOf: the active key made last signs; a key still waiting for
// its turn when a later rotation (--now) made a newer one never does, even
// once its turn comes; a tie in time is broken the same way every time.
func TestSigningOf(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	a := keyTimes{alg: "RS256", id: "a", created: t0, activeFrom: t0}
	b := keyTimes{alg: "RS256", id: "b", created: t0.Add(time.Minute), activeFrom: t0.Add(time.Hour)} // pending, signs in an hour
	c := keyTimes{alg: "RS256", id: "c", created: t0.Add(2 * time.Minute), activeFrom: t0.Add(2 * time.Minute)}
	es := keyTimes{alg: "ES256", id: "e", created: t0.Add(3 * time.Minute), activeFrom: t0}
	id := func(k keyTimes) keyTimes { return k }
	pick := func(keys []keyTimes, now time.Time) string {
		k, ok := signingOf(keys, "RS256", now, id)
		if !ok {
			return ""
		}
		return k.id
	}
	for _, tc := range []struct {
		name string
		keys []keyTimes
		now  time.Time
		want string
	}{
		{"the first key", []keyTimes{a, es}, t0, "a"},
		{"a pending key waits", []keyTimes{a, b, es}, t0.Add(30 * time.Minute), "a"},
		{"its turn comes", []keyTimes{a, b, es}, t0.Add(2 * time.Hour), "b"},
		{"a later --now rotation takes over at once", []keyTimes{a, b, c, es}, t0.Add(3 * time.Minute), "c"},
		{"and the superseded pending key never signs", []keyTimes{a, b, c, es}, t0.Add(2 * time.Hour), "c"},
		{"no active key of the algorithm", []keyTimes{b, es}, t0, ""},
		{"a tie in time: the larger id, whatever the order", []keyTimes{{alg: "RS256", id: "y", created: t0, activeFrom: t0}, {alg: "RS256", id: "x", created: t0, activeFrom: t0}}, t0, "y"},
	} {
		if got := pick(tc.keys, tc.now); got != tc.want {
			t.Errorf("%s: %q signs, want %q", tc.name, got, tc.want)
		}
	}
}
