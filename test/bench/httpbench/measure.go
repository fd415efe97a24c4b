package main

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// pair is one run of a target and the runs of the bare handler just before
// and just after it.
type pair struct {
	Target, Before, After wrkResult
}

// bareRPS and bareP99 are the bare handler's figures around the target's
// run: the mean of the run before and the run after, which cancels a
// steady drift of the machine's background load.
func (p pair) bareRPS() float64 { return (p.Before.RPS + p.After.RPS) / 2 }
func (p pair) bareP99() float64 { return float64(p.Before.P99+p.After.P99) / 2 }
func (p pair) bareCPU() float64 { return float64(p.Before.CPUPerReq+p.After.CPUPerReq) / 2 }

// results are the interleaved rounds' measurements.
type results struct {
	Pairs     map[string][]pair // by target key, one per round
	Bare      []wrkResult       // every bare run
	RSS       map[string]int64  // KiB, of the target's process after the target's last run
	Peak      map[string]int64  // KiB, VmHWM of the target's process at the end
	SocketErr map[string][]string
	LoadStart string // /proc/loadavg before and after
	LoadEnd   string
	Start     time.Time
	Elapsed   time.Duration
}

// measure warms every target up, then runs the rounds: bare, target 1,
// bare, target 2, ..., and one bare run to close, so that each target is
// compared with bare runs made moments before and after it, under the same
// background load.
func measure(ctx context.Context, o options, targets []*target) (*results, error) {
	bare, rest := targets[0], targets[1:]
	res := &results{Pairs: map[string][]pair{}, RSS: map[string]int64{}, Peak: map[string]int64{},
		SocketErr: map[string][]string{}, LoadStart: loadavg(), Start: time.Now()}
	one := func(t *target, d time.Duration) (wrkResult, error) {
		if err := t.ready(); err != nil {
			return wrkResult{}, err
		}
		cpu := t.Proc.cpu()
		r, err := runWrk(ctx, o.Load, t, d)
		if err != nil {
			return r, err
		}
		if r.Requests > 0 {
			r.CPUPerReq = (t.Proc.cpu() - cpu) / time.Duration(r.Requests)
		}
		if r.Non2xx > 0 || r.Requests == 0 {
			return r, fmt.Errorf("%s: %d of %d answers under load were not 2xx", t.Name, r.Non2xx, r.Requests)
		}
		if r.SocketErr != "" {
			res.SocketErr[t.Key] = append(res.SocketErr[t.Key], r.SocketErr)
		}
		return r, nil
	}
	if o.Warmup > 0 {
		logf("warming up: %s per target", o.Warmup)
		for _, t := range targets {
			if _, err := one(t, o.Warmup); err != nil {
				return nil, err
			}
		}
	}
	b, err := one(bare, o.Duration)
	if err != nil {
		return nil, err
	}
	res.Bare = append(res.Bare, b)
	for round := 1; round <= o.Rounds; round++ {
		for _, t := range rest {
			r, err := one(t, o.Duration)
			if err != nil {
				return nil, err
			}
			res.RSS[t.Key], _ = t.Proc.mem()
			before := res.Bare[len(res.Bare)-1]
			if b, err = one(bare, o.Duration); err != nil {
				return nil, err
			}
			res.Bare = append(res.Bare, b)
			p := pair{Target: r, Before: before, After: b}
			res.Pairs[t.Key] = append(res.Pairs[t.Key], p)
			logf("round %d/%d  %-11s %7.0f req/s  p99 %-9s %s/req | bare around it %7.0f req/s  p99 %-9s %s/req | %3.0f%%",
				round, o.Rounds, t.Key, r.RPS, ms(r.P99), us(r.CPUPerReq), p.bareRPS(), ms(time.Duration(p.bareP99())),
				us(time.Duration(p.bareCPU())), 100*r.RPS/p.bareRPS())
		}
	}
	res.RSS[bare.Key], _ = bare.Proc.mem()
	for _, t := range targets {
		_, res.Peak[t.Key] = t.Proc.mem()
	}
	res.LoadEnd, res.Elapsed = loadavg(), time.Since(res.Start)
	return res, nil
}

// summary is one row of the table: medians over the rounds.
type summary struct {
	RPS      float64
	P99      time.Duration
	RPSRatio float64 // median over rounds of req/s ÷ the bare runs' around it
	P99Ratio float64 // likewise for p99
	CPU      time.Duration
	CPURatio float64 // bare's CPU per request ÷ the target's: the req/s ratio a CPU-bound server would reach
}

func summarize(res *results, t *target) summary {
	if t.Key == "bare" {
		var rps, p99, cpu []float64
		for _, b := range res.Bare {
			rps, p99, cpu = append(rps, b.RPS), append(p99, float64(b.P99)), append(cpu, float64(b.CPUPerReq))
		}
		return summary{RPS: median(rps), P99: time.Duration(median(p99)), CPU: time.Duration(median(cpu))}
	}
	var rps, p99, cpu, rr, pr, cr []float64
	for _, p := range res.Pairs[t.Key] {
		rps, p99, cpu = append(rps, p.Target.RPS), append(p99, float64(p.Target.P99)), append(cpu, float64(p.Target.CPUPerReq))
		rr = append(rr, p.Target.RPS/p.bareRPS())
		pr = append(pr, float64(p.Target.P99)/p.bareP99())
		if p.Target.CPUPerReq > 0 {
			cr = append(cr, p.bareCPU()/float64(p.Target.CPUPerReq))
		}
	}
	return summary{RPS: median(rps), P99: time.Duration(median(p99)), RPSRatio: median(rr), P99Ratio: median(pr),
		CPU: time.Duration(median(cpu)), CPURatio: median(cr)}
}

// verdict compares a row with the goals.
func verdict(t *target, s summary) string {
	var miss []string
	if s.RPSRatio < t.Goal {
		miss = append(miss, "req/s")
	}
	if s.P99Ratio > p99Goal {
		miss = append(miss, "p99")
	}
	switch len(miss) {
	case 0:
		return "PASS"
	case 1:
		return "MISS (" + miss[0] + ")"
	default:
		return "MISS (" + miss[0] + ", " + miss[1] + ")"
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
