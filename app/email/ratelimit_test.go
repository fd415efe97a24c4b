package email

import (
	"fmt"
	"testing"
	"time"
)

func TestLimiterPerKeyWindow(t *testing.T) {
	l := NewLimiter(5, time.Hour)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		if !l.Allow("a", t0) {
			t.Fatalf("event %d of 5 refused", i+1)
		}
	}
	if l.Allow("a", t0.Add(time.Minute)) {
		t.Fatal("6th event within the window allowed")
	}
	if !l.Allow("b", t0.Add(time.Minute)) {
		t.Fatal("another key is limited by a's events")
	}
	// One event comes back every window/n (12 minutes).
	if !l.Allow("a", t0.Add(12*time.Minute)) {
		t.Fatal("no event allowed after window/n")
	}
	if l.Allow("a", t0.Add(13*time.Minute)) {
		t.Fatal("two events allowed after window/n")
	}
}

func TestLimiterEvictsIdleKeys(t *testing.T) {
	l := NewLimiter(2, time.Hour)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 50 {
		l.Allow(fmt.Sprint("k", i), t0)
	}
	l.Allow("late", t0.Add(59*time.Minute))
	if l.Len() != 51 {
		t.Fatalf("%d keys, want 51", l.Len())
	}
	// A window later every key but "late" is idle and goes; an evicted key
	// starts with a full bucket, exactly as if it had been kept.
	l.Allow("k0", t0.Add(time.Hour+time.Second))
	if l.Len() != 2 {
		t.Fatalf("%d keys after a window, want 2 (late, k0)", l.Len())
	}
	if !l.Allow("k0", t0.Add(time.Hour+2*time.Second)) {
		t.Fatal("re-created key has no burst left")
	}
}

func TestLimiterFailsClosedWhenFull(t *testing.T) {
	l := NewLimiter(1, time.Hour)
	l.maxKeys = 3
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, k := range []string{"a", "b", "c"} {
		l.Allow(k, t0)
	}
	if l.Allow("d", t0.Add(time.Minute)) {
		t.Fatal("new key accepted although the table is full of active keys")
	}
	if !l.Allow("d", t0.Add(time.Hour)) {
		t.Fatal("new key refused after the others went idle")
	}
}

func TestClientKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7:5555":                "192.0.2.7",
		"192.0.2.7":                     "192.0.2.7",
		"[::ffff:192.0.2.7]:80":         "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443":    "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1%eth0]:1": "2001:db8:1:2::/64",
		"pipe":                          "pipe",
	} {
		if got := ClientKey(in); got != want {
			t.Errorf("ClientKey(%q) = %q, want %q", in, got, want)
		}
	}
}
