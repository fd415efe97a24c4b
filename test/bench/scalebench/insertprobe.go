package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/latchkey-auth/latchkey/models"
	"github.com/latchkey-auth/latchkey/models/scalefill"
)

// probeCommand is the first argument that makes the bench's own binary the
// insert probe (insertProbeMain) instead of the bench.
const probeCommand = "insert-probe"

// insertProbe is a "sign-in" that inserts a session every 10 ms and times
// each insert, in a process of its own: the bench's load clients and the
// purge run in the bench's process, and on 2 busy cores the probe's
// goroutine waited for them (up to 343 ms at 10⁷ with or without a purge)
// where its own process, measured by hand beside the same load, waited
// 14 ms without a purge and 81 ms during one. The child's time is the
// database's: its locks, its commits, its checkpoints.
type insertProbe struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startInsertProbe starts the probe on the database of c with session
// token hashes prefix-0, prefix-1, ... for the filled users, signed in at
// now; it is inserting when this returns.
func startInsertProbe(c models.Config, sz scalefill.Sizes, now time.Time, prefix string) (*insertProbe, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("insert probe: %w", err)
	}
	cmd := exec.Command(exe, probeCommand, c.Dialect, c.DSN, prefix, strconv.Itoa(sz.Users), now.Format(time.RFC3339Nano))
	cmd.Stderr = os.Stderr
	p := &insertProbe{cmd: cmd}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("insert probe: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("insert probe: %w", err)
	}
	p.out = bufio.NewReader(stdout)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("insert probe: %w", err)
	}
	if line, err := p.out.ReadString('\n'); err != nil || line != "inserting\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("insert probe did not start: %q %v", line, err)
	}
	return p, nil
}

// inserts is what the probe measured: how many inserts, the p99 and the
// longest of them, and how many took over 100 ms (the bound on a
// sign-in's wait for the purge's lock).
type inserts struct {
	N, Over100ms int
	P99, Longest time.Duration
}

func (i inserts) String() string {
	return fmt.Sprintf("%s, p99 %s, %d of %d over 100 ms", ms(i.Longest), ms(i.P99), i.Over100ms, i.N)
}

// stop ends the probe and returns what it measured.
func (p *insertProbe) stop() (inserts, error) {
	_ = p.stdin.Close()
	line, rerr := p.out.ReadString('\n')
	if err := p.cmd.Wait(); err != nil {
		return inserts{}, fmt.Errorf("insert probe: %w", err)
	}
	var r inserts
	var p99, longest int64
	if _, err := fmt.Sscanf(line, "%d %d %d %d", &r.N, &p99, &longest, &r.Over100ms); err != nil {
		return inserts{}, fmt.Errorf("insert probe's answer %q: %w", line, errors.Join(err, rerr))
	}
	r.P99, r.Longest = time.Duration(p99), time.Duration(longest)
	return r, nil
}

// insertProbeMain is the probe's process: args are the dialect, the DSN,
// the token prefix, the number of filled users and the sign-in time. It
// says "inserting", inserts until its standard input closes, then prints
// the number of inserts, their p99 and longest in nanoseconds, and how
// many took over 100 ms. A failed insert fails the probe: a
// sign-in that fails is worse than a slow one.
func insertProbeMain(args []string) error {
	if len(args) != 5 {
		return fmt.Errorf("%s: want dialect dsn prefix users now, got %d arguments", probeCommand, len(args))
	}
	users, err := strconv.Atoi(args[3])
	if err != nil {
		return err
	}
	now, err := time.Parse(time.RFC3339Nano, args[4])
	if err != nil {
		return err
	}
	s, err := models.Connect(models.Config{Dialect: args[0], DSN: args[1], SkipMigrate: true})
	if err != nil {
		return err
	}
	defer s.Close()
	var done atomic.Bool
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		done.Store(true)
	}()
	fmt.Println("inserting")
	var took []time.Duration
	for i := 0; !done.Load(); i++ {
		time.Sleep(10 * time.Millisecond)
		t0 := time.Now()
		err := s.CreateSession(context.Background(), models.NewSession{UserID: scalefill.UserID(i % users),
			TokenHash: fmt.Sprintf("%s-%d", args[2], i), SignedIn: now, Expires: now.Add(time.Hour)})
		if err != nil {
			return fmt.Errorf("insert %d: %w", i, err)
		}
		took = append(took, time.Since(t0))
	}
	if len(took) == 0 {
		return errors.New("no insert")
	}
	slices.Sort(took)
	over := len(took) - sort.Search(len(took), func(i int) bool { return took[i] > 100*time.Millisecond })
	fmt.Println(len(took), int64(took[len(took)*99/100]), int64(took[len(took)-1]), over)
	return nil
}
