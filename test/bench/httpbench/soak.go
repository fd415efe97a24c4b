package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

// sample is the target process's memory at one moment of the soak.
type sample struct {
	At       time.Duration // since the load started; negative: before it, after the end: after it
	RSS, HWM int64         // KiB
	FDs      int           // open file descriptors
	Sockets  int           // of which sockets
	Phase    string
}

// soak keeps one target under load for o.Soak, sampling the resident memory
// of its process every o.SoakEvery, and reports how it grew: a leak shows as
// growth in the second half, when warm-up (pools, caches, the heap reaching
// its size) is over.
func soak(ctx context.Context, o options, targets []*target) error {
	var t *target
	for _, c := range targets {
		if c.Key == o.SoakTarget && c.Key != "bare" {
			t = c
		}
	}
	if t == nil {
		return fmt.Errorf("soak target %q: not one of the latchkey targets of this run", o.SoakTarget)
	}
	logf("soak: %s for %s, sampling RSS every %s", t.Key, o.Soak, o.SoakEvery)
	take := func(at time.Duration, phase string) sample {
		rss, hwm := t.Proc.mem()
		s := sample{At: at, RSS: rss, HWM: hwm, Phase: phase}
		s.FDs, s.Sockets = t.Proc.fds()
		logf("soak %-6s %8s  RSS %s  peak %s  fds %d (sockets %d)", phase, at.Round(time.Second), mib(s.RSS), mib(s.HWM), s.FDs, s.Sockets)
		return s
	}
	if err := t.ready(); err != nil {
		return err
	}
	samples := []sample{take(0, "before")}
	type outcome struct {
		r   wrkResult
		err error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		r, err := runWrk(ctx, o.Load, t, o.Soak)
		done <- outcome{r, err}
	}()
	tick := time.NewTicker(o.SoakEvery)
	defer tick.Stop()
	var out outcome
wait:
	for {
		select {
		case <-tick.C:
			samples = append(samples, take(time.Since(start), "load"))
		case out = <-done:
			break wait
		}
	}
	if out.err != nil {
		return out.err
	}
	if out.r.Non2xx > 0 || out.r.Requests == 0 {
		return fmt.Errorf("soak: %d of %d answers were not 2xx", out.r.Non2xx, out.r.Requests)
	}
	time.Sleep(2 * time.Second)
	samples = append(samples, take(time.Since(start), "after"))
	printSoak(o, t, samples, out.r)
	return nil
}

func printSoak(o options, t *target, samples []sample, r wrkResult) {
	w := os.Stdout
	fmt.Fprintf(w, "\n### Soak: %s, wrk -t%d -c%d for %s\n\n", t.Name, o.Load.Threads, o.Load.Conns, o.Soak)
	fmt.Fprintf(w, "%s req/s, p99 %s, %d requests", thousands(r.RPS), ms(r.P99), r.Requests)
	if r.SocketErr != "" {
		fmt.Fprintf(w, ", socket errors: %s", r.SocketErr)
	}
	fmt.Fprint(w, ".\n\n| time | phase | RSS | peak (VmHWM) | open fds | of which sockets |\n| ---: | --- | ---: | ---: | ---: | ---: |\n")
	var load []sample
	for _, s := range samples {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %d |\n", s.At.Round(time.Second), s.Phase, mib(s.RSS), mib(s.HWM), s.FDs, s.Sockets)
		if s.Phase == "load" {
			load = append(load, s)
		}
	}
	if len(load) < 2 {
		fmt.Fprintln(w, "\nToo short for a growth figure: fewer than two samples under load (BENCH_SOAK_EVERY).")
		return
	}
	first, mid, last := load[0], load[len(load)/2], load[len(load)-1]
	fmt.Fprintf(w, "\nRSS growth under load: %s from the first sample (%s) to the last (%s); "+
		"%s in the second half (%s to %s, after warm-up: a leak shows here). Open fds %d → %d.\n",
		growth(first.RSS, last.RSS), first.At.Round(time.Second), last.At.Round(time.Second),
		growth(mid.RSS, last.RSS), mid.At.Round(time.Second), last.At.Round(time.Second), first.FDs, last.FDs)
}

func growth(from, to int64) string {
	if from == 0 {
		return "?"
	}
	return fmt.Sprintf("%+.1f MiB (%+.0f%%)", float64(to-from)/1024, 100*float64(to-from)/float64(from))
}
