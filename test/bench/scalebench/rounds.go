package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/latchkey-auth/latchkey/models"
)

// round is one round's loads on one size.
type round struct {
	Bare, Session, Authz, BareAfter          stat
	EmailSignIn, PasswordSignIn, OAuthSignIn stat
}

// mergeRounds sets the result's loads to the merge of its rounds: all
// their operations, their time and CPU added, the percentiles of all the
// operations' times.
func (r *result) mergeRounds() {
	for _, f := range []struct {
		to  *stat
		get func(*round) *stat
	}{
		{&r.Bare, func(x *round) *stat { return &x.Bare }},
		{&r.Session, func(x *round) *stat { return &x.Session }},
		{&r.Authz, func(x *round) *stat { return &x.Authz }},
		{&r.BareAfter, func(x *round) *stat { return &x.BareAfter }},
		{&r.EmailSignIn, func(x *round) *stat { return &x.EmailSignIn }},
		{&r.PasswordSignIn, func(x *round) *stat { return &x.PasswordSignIn }},
		{&r.OAuthSignIn, func(x *round) *stat { return &x.OAuthSignIn }},
	} {
		var all []*stat
		for i := range r.Rounds {
			all = append(all, f.get(&r.Rounds[i]))
		}
		*f.to = merge(all)
	}
}

// merge is one stat of several loads of the same kind; it drops their
// times, which it has used.
func merge(stats []*stat) stat {
	var m stat
	statements := map[string]statement{}
	for _, s := range stats {
		m.N += s.N
		m.Elapsed += s.Elapsed
		m.Errors += s.Errors
		if m.FirstBad == "" {
			m.FirstBad = s.FirstBad
		}
		m.CPU = m.CPU.plus(s.CPU)
		m.lat = append(m.lat, s.lat...)
		s.lat = nil
		for _, st := range s.Statements {
			statements[st.Key] = statements[st.Key].plus(st)
		}
	}
	if m.Elapsed > 0 {
		m.RPS = float64(m.N) / m.Elapsed.Seconds()
	}
	slices.Sort(m.lat)
	m.percentiles()
	m.lat = nil
	for _, st := range statements {
		m.Statements = append(m.Statements, st)
	}
	slices.SortFunc(m.Statements, func(a, b statement) int { return cmp.Compare(b.Exec, a.Exec) })
	return m
}

// reportRounds prints, when there was more than one round, each round's
// full ÷ small figures and their median: what one round decides, and how
// far rounds of the same run differ on a shared machine.
func reportRounds(dialect string, r [2]*result) {
	n := min(len(r[0].Rounds), len(r[1].Rounds))
	if n < 2 {
		return
	}
	pg := dialect == models.DialectPostgres
	type column struct {
		name string
		get  func(*round) stat
	}
	cols := []column{
		{"`GET /session`", func(x *round) stat { return x.Session }},
		{"forward-auth", func(x *round) stat { return x.Authz }},
		{"e-mail sign-in", func(x *round) stat { return x.EmailSignIn }},
		{"password sign-in", func(x *round) stat { return x.PasswordSignIn }},
		{"OAuth sign-in", func(x *round) stat { return x.OAuthSignIn }},
	}
	cpu := "latchkey CPU"
	if pg {
		cpu = "CPU latchkey / PostgreSQL"
	}
	fmt.Printf("### %s round by round (%d → %d sessions; each cell: req/s or ops/s, p99, %s per operation, full ÷ small)\n\n| round |", dialect, r[0].Sizes.Sessions, r[1].Sizes.Sessions, cpu)
	for _, c := range cols {
		fmt.Printf(" %s |", c.name)
	}
	fmt.Printf("\n|---|%s\n", strings.Repeat("---|", len(cols)))
	// ratios[c][k] are column c's k-th figure's ratios, one per round.
	ratios := make([][][]float64, len(cols))
	for i := range n {
		fmt.Printf("| %d |", i+1)
		for c, col := range cols {
			a, b := col.get(&r[0].Rounds[i]), col.get(&r[1].Rounds[i])
			pa, pb := a.CPU.perReq(a.N), b.CPU.perReq(b.N)
			fig := []float64{ratio(b.RPS, a.RPS), ratio(float64(b.P99), float64(a.P99)), ratio(float64(pb.Latchkey), float64(pa.Latchkey))}
			if pg {
				fig = append(fig, ratio(float64(pb.DB), float64(pa.DB)))
			}
			if ratios[c] == nil {
				ratios[c] = make([][]float64, len(fig))
			}
			for k, v := range fig {
				ratios[c][k] = append(ratios[c][k], v)
			}
			fmt.Printf(" %s |", cell(fig))
		}
		fmt.Println()
	}
	fmt.Print("| median |")
	for c := range cols {
		med := make([]float64, len(ratios[c]))
		for k, vs := range ratios[c] {
			med[k] = median(vs)
		}
		fmt.Printf(" **%s** |", cell(med))
	}
	fmt.Print("\n\n")
}

// cell is a round's ratios: throughput, p99, CPU (latchkey / PostgreSQL).
func cell(fig []float64) string {
	s := fmt.Sprintf("%.2f, %.2f, %.2f", fig[0], fig[1], fig[2])
	if len(fig) > 3 {
		s += fmt.Sprintf(" / %.2f", fig[3])
	}
	return s
}

// ratio is a ÷ b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// median of vs (the mean of the middle two for an even count).
func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
