package multi_test

// The fail-over test's measurements and its report.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// report is the fail-over test's findings.
type report struct {
	events []eventReport
	after  afterwards
	total  map[string]int // answers by class, the whole load
	wall   time.Duration
}

// eventReport is what one event's window of answers shows.
type eventReport struct {
	*event
	untilSignIn time.Duration // from the start to the first e-mail sign-in sent after it (its answer); -1: none
	untilWrite  time.Duration // the same for any write (sign-in form, link, sign-out)
	gap         time.Duration // the longest time without a write completing, from the start on
	gapFrom     time.Time
	gapTo       time.Time
	inGap       map[string]int // answers to requests sent during the gap, by class
	classes     map[string]int // answers to requests sent in the window, by class
	unavailable map[string]int // of those, the 503s by route
	readers503  int            // of those, GET /session 503s to the readers (sessions read every 50 ms)
	sessionsOK  int            // of those: GET /session answered with the user
	lost        int
	consumed    int
	retried     int
}

// summarize measures each event from the answers.
func summarize(answers []answer, events []*event, after afterwards) report {
	sort.Slice(answers, func(i, j int) bool { return answers[i].sent.Before(answers[j].sent) })
	rep := report{after: after, total: map[string]int{}}
	for _, a := range answers {
		rep.total[a.class]++
	}
	for _, ev := range events {
		er := eventReport{event: ev, untilSignIn: -1, untilWrite: -1, inGap: map[string]int{}, classes: map[string]int{}, unavailable: map[string]int{}}
		var writes []time.Time
		for _, a := range answers {
			if a.sent.Before(ev.start) || a.sent.After(ev.end) {
				continue
			}
			er.classes[a.class]++
			if a.class == class503 {
				er.unavailable[a.op]++
				if a.op == opSession && strings.HasPrefix(a.who, "r") {
					er.readers503++
				}
			}
			if a.op == opSession && a.class == classOK {
				er.sessionsOK++
			}
			if a.write() {
				writes = append(writes, a.done)
				if er.untilWrite < 0 || a.done.Sub(ev.start) < er.untilWrite {
					er.untilWrite = a.done.Sub(ev.start)
				}
				if a.op == opLink && (er.untilSignIn < 0 || a.done.Sub(ev.start) < er.untilSignIn) {
					er.untilSignIn = a.done.Sub(ev.start)
				}
			}
		}
		sort.Slice(writes, func(i, j int) bool { return writes[i].Before(writes[j]) })
		prev := ev.start
		for _, w := range append(writes, ev.end) {
			if d := w.Sub(prev); d > er.gap {
				er.gap, er.gapFrom, er.gapTo = d, prev, w
			}
			if w.After(prev) {
				prev = w
			}
		}
		for _, a := range answers {
			if !a.sent.Before(er.gapFrom) && a.sent.Before(er.gapTo) {
				er.inGap[a.class]++
			}
		}
		in := func(t time.Time) bool { return !t.Before(ev.start) && !t.After(ev.end) }
		for _, l := range after.lost {
			if in(l.at) {
				er.lost++
			}
		}
		for _, f := range after.consumed {
			if in(f.clicked.sent) {
				er.consumed++
			}
		}
		for _, f := range after.retried {
			if in(f.clicked.sent) {
				er.retried++
			}
		}
		rep.events = append(rep.events, er)
	}
	return rep
}

func (r report) lostTotal() int { return len(r.after.lost) }

// markdown is the report as the bench:failover task prints it.
func (r report) markdown() string {
	var b strings.Builder
	b.WriteString("# latchkey on pg_auto_failover: fail-over under load\n\n")
	b.WriteString("Two latchkey instances behind a round-robin proxy, one monitor and two data nodes (synchronous standby); ")
	b.WriteString("browsers reading their session every 50 ms, three signing fresh browsers in by e-mail (every other one signing out).\n\n")
	b.WriteString("| | " + strings.Join(r.names(), " | ") + " |\n")
	b.WriteString("|---" + strings.Repeat("|---", len(r.events)) + "|\n")
	row := func(label string, cell func(eventReport) string) {
		cells := make([]string, len(r.events))
		for i, e := range r.events {
			cells[i] = cell(e)
		}
		b.WriteString("| " + label + " | " + strings.Join(cells, " | ") + " |\n")
	}
	row("primary", func(e eventReport) string { return e.from + " → " + e.to })
	row("a writable primary, by the monitor's word", func(e eventReport) string { return seconds(e.primaryAt.Sub(e.start)) })
	row("first e-mail sign-in sent after the start", func(e eventReport) string { return seconds(e.untilSignIn) })
	row("first write sent after the start", func(e eventReport) string { return seconds(e.untilWrite) })
	row("longest time without a write", func(e eventReport) string { return seconds(e.gap) })
	row("answers: 200 with the user (GET /session)", func(e eventReport) string { return fmt.Sprint(e.sessionsOK) })
	row("answers: other normal ones", func(e eventReport) string { return fmt.Sprint(e.classes[classOK] - e.sessionsOK) })
	row("answers: 503 with Retry-After", func(e eventReport) string { return fmt.Sprint(e.classes[class503]) })
	row("503s by route", func(e eventReport) string {
		var parts []string
		for _, op := range []string{opSession, opCSRF, opSignIn, opLink, opSignOut} {
			if n := e.unavailable[op]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", op, n))
			}
		}
		if len(parts) == 0 {
			return "–"
		}
		return strings.Join(parts, ", ")
	})
	row("of those, GET /session to readers (their session read every 50 ms)", func(e eventReport) string { return fmt.Sprint(e.readers503) })
	row("answers: other (must be 0)", func(e eventReport) string { return fmt.Sprint(e.classes[classBad]) })
	row("requests during the longest gap (ok / 503 / other)", func(e eventReport) string {
		return fmt.Sprintf("%d / %d / %d", e.inGap[classOK], e.inGap[class503], e.inGap[classBad])
	})
	row("committed writes lost (must be 0)", func(e eventReport) string { return fmt.Sprint(e.lost) })
	row("links consumed without a session (click got 503)", func(e eventReport) string { return fmt.Sprint(e.consumed) })
	row("links whose click got 503, signing in later", func(e eventReport) string { return fmt.Sprint(e.retried) })
	fmt.Fprintf(&b, "\nWhole load: %d answers, %d normal, %d 503 with Retry-After, %d other. ", r.total[classOK]+r.total[class503]+r.total[classBad], r.total[classOK], r.total[class503], r.total[classBad])
	fmt.Fprintf(&b, "Committed writes lost: %d. Links consumed by a click answered 503: %d (%d with a session row no browser got). Sign-outs answered 503: %d.\n",
		len(r.after.lost), len(r.after.consumed), r.after.orphans, r.after.unknown)
	for _, l := range r.after.lost {
		fmt.Fprintf(&b, "- lost, answered at %s: %s\n", l.at.Format("15:04:05.000"), l.what)
	}
	if r.wall > 0 {
		fmt.Fprintf(&b, "\nTest wall time %s, the formation's creation included.\n", r.wall.Round(time.Second))
	}
	return b.String()
}

func (r report) names() []string {
	out := make([]string, len(r.events))
	for i, e := range r.events {
		out[i] = e.name
	}
	return out
}

// seconds shows a duration in seconds; a negative one is "none".
func seconds(d time.Duration) string {
	if d < 0 {
		return "none"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func countClass(answers []answer, class string) int {
	n := 0
	for _, a := range answers {
		if a.class == class {
			n++
		}
	}
	return n
}

// mustJSON decodes a JSON object.
func mustJSON(t *testing.T, body string) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
	return v
}
