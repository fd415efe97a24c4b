package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// wrkResult is what one wrk run measured.
type wrkResult struct {
	RPS       float64       // Requests/sec
	P50, P99  time.Duration // from --latency
	Requests  int64         // requests completed
	Non2xx    int64         // "Non-2xx or 3xx responses" (wrk counts status >= 400)
	SocketErr string        // wrk's "Socket errors" line, "" when there were none
	// CPUPerReq is the server process's CPU time (user and system) during
	// the run divided by the requests it answered: what one request costs
	// the server, which a machine busy with other work disturbs far less
	// than req/s (the process is charged only for what it ran).
	CPUPerReq time.Duration
}

// load is the shape of the load: wrk -t threads -c conns.
type load struct {
	Threads, Conns int
}

// wrkArgs builds wrk's command line for d of load on t.
func wrkArgs(l load, t *target, d time.Duration) []string {
	secs := int((d + time.Second - 1) / time.Second) // wrk takes whole seconds
	args := []string{"-t", strconv.Itoa(l.Threads), "-c", strconv.Itoa(l.Conns),
		"-d", strconv.Itoa(max(secs, 1)) + "s", "--latency"}
	if t.Cookie != "" {
		args = append(args, "-H", "Cookie: "+t.Cookie)
	}
	for _, h := range t.Headers {
		args = append(args, "-H", h)
	}
	if t.Script != "" {
		args = append(args, "-s", t.Script)
	}
	args = append(args, t.URL)
	if len(t.ScriptArgs) > 0 {
		args = append(append(args, "--"), t.ScriptArgs...)
	}
	return args
}

// runWrk runs wrk against t for d and parses its report; the caller has
// run t.ready first.
func runWrk(ctx context.Context, l load, t *target, d time.Duration) (wrkResult, error) {
	cmd := exec.CommandContext(ctx, "wrk", wrkArgs(l, t, d)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk %s: %w: %s", t.Key, err, out)
	}
	r, err := parseWrk(string(out))
	if err != nil {
		return r, fmt.Errorf("wrk %s: %w; output:\n%s", t.Key, err, out)
	}
	return r, nil
}

var (
	reRPS      = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	reRequests = regexp.MustCompile(`(?m)^\s*([0-9]+) requests in `)
	reNon2xx   = regexp.MustCompile(`(?m)^\s*Non-2xx or 3xx responses:\s+([0-9]+)`)
	reSocket   = regexp.MustCompile(`(?m)^\s*Socket errors:\s*(.+)$`)
	rePct      = regexp.MustCompile(`^\s*([0-9.]+)%\s+([0-9.]+)(us|ms|s|m|h)\s*$`)
)

// parseWrk reads the report of `wrk --latency`.
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	m := reRPS.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("no Requests/sec line")
	}
	r.RPS, _ = strconv.ParseFloat(m[1], 64)
	if m := reRequests.FindStringSubmatch(out); m != nil {
		r.Requests, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := reNon2xx.FindStringSubmatch(out); m != nil {
		r.Non2xx, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := reSocket.FindStringSubmatch(out); m != nil {
		r.SocketErr = strings.TrimSpace(m[1])
	}
	inDist := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "Latency Distribution") {
			inDist = true
			continue
		}
		if !inDist {
			continue
		}
		m := rePct.FindStringSubmatch(line)
		if m == nil {
			inDist = false
			continue
		}
		d, err := wrkDuration(m[2], m[3])
		if err != nil {
			return r, err
		}
		switch m[1] {
		case "50", "50.000":
			r.P50 = d
		case "99", "99.000":
			r.P99 = d
		}
	}
	if r.P99 == 0 {
		return r, fmt.Errorf("no 99%% latency line (was --latency given?)")
	}
	return r, nil
}

// wrkDuration reads one of wrk's latencies ("1.23" "ms").
func wrkDuration(num, unit string) (time.Duration, error) {
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("latency %q: %w", num+unit, err)
	}
	scale := map[string]float64{"us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}[unit]
	return time.Duration(f * scale), nil
}
