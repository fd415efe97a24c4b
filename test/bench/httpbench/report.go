package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// printReport writes the rounds' table in Markdown, with what is needed to
// read it: when, which code, which machine, which load.
func printReport(w io.Writer, o options, targets []*target, res *results) {
	fmt.Fprintf(w, "\n### latchkey HTTP bench, %s, %s\n\n", res.Start.UTC().Format("2006-01-02 15:04 UTC"), codeUnderTest(o))
	fmt.Fprintf(w, "%s; %s; load average %s before, %s after.\n", machine(), runtime.Version(), res.LoadStart, res.LoadEnd)
	fmt.Fprintf(w, "wrk -t%d -c%d -d%s, %d interleaved rounds (%s in all); medians over the rounds. "+
		"Ratios: each run against the mean of the bare runs just before and just after it, median over the rounds. "+
		"Goals (issue): p99 at most %.1f× bare's, req/s as shown. CPU/req: the server process's user+system CPU time during the run ÷ requests; "+
		"bare ÷ target is the share of bare's req/s a CPU-bound server would reach, steadier than req/s on a busy machine. "+
		"RSS: VmRSS of that latchkey process after the target's last run (peak VmHWM).\n\n",
		o.Load.Threads, o.Load.Conns, o.Duration, o.Rounds, res.Elapsed.Round(time.Second), p99Goal)
	fmt.Fprintln(w, "| target | req/s | p99 | req/s ÷ bare | p99 ÷ bare | goal | vs goal | CPU/req | bare ÷ CPU/req | RSS (peak) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |")
	for _, t := range targets {
		s := summarize(res, t)
		mem := fmt.Sprintf("%s (%s)", mib(res.RSS[t.Key]), mib(res.Peak[t.Key]))
		if t.Floor {
			fmt.Fprintf(w, "| %s | %s | %s | %.0f%% | %.2f× | (reference) | | %s | %.0f%% | |\n",
				t.Name, thousands(s.RPS), ms(s.P99), 100*s.RPSRatio, s.P99Ratio, us(s.CPU), 100*s.CPURatio)
			continue
		}
		if t.Key == "bare" {
			fmt.Fprintf(w, "| %s | %s | %s | 100%% | 1.00× | | | %s | 100%% | %s |\n", t.Name, thousands(s.RPS), ms(s.P99), us(s.CPU), mem)
			continue
		}
		if t.Goal == 0 { // no goal in the issue: the figures only
			fmt.Fprintf(w, "| %s | %s | %s | %.0f%% | %.2f× | (none) | | %s | %.0f%% | %s |\n",
				t.Name, thousands(s.RPS), ms(s.P99), 100*s.RPSRatio, s.P99Ratio, us(s.CPU), 100*s.CPURatio, mem)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.0f%% | %.2f× | ≥ %.0f%%, p99 ≤ %.1f× | %s | %s | %.0f%% | %s |\n",
			t.Name, thousands(s.RPS), ms(s.P99), 100*s.RPSRatio, s.P99Ratio, 100*t.Goal, p99Goal, verdict(t, s), us(s.CPU), 100*s.CPURatio, mem)
	}
	for _, t := range targets {
		if errs := res.SocketErr[t.Key]; len(errs) > 0 {
			fmt.Fprintf(w, "\n%s: wrk socket errors in %d runs: %s", t.Name, len(errs), strings.Join(errs, "; "))
		}
	}
	fmt.Fprintln(w, "\nThe goals are informational: a MISS does not fail the task.")
}

// codeUnderTest names the commit measured, or the binary given.
func codeUnderTest(o options) string {
	if o.LatchkeyBin != "" {
		return "binary " + o.LatchkeyBin
	}
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "commit unknown"
	}
	s := "commit " + strings.TrimSpace(string(out))
	if st, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); len(st) > 0 {
		s += " + uncommitted changes"
	}
	return s
}

// machine is the CPU count and model.
func machine() string {
	model := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs (%s), shared by wrk and the servers", runtime.NumCPU(), model)
}

// loadavg is the 1-minute load average.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/1e3) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

// thousands formats n rounded, with thousands separated by commas.
func thousands(n float64) string {
	s := fmt.Sprintf("%.0f", n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
