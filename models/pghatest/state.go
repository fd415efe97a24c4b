package pghatest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// NodeState is what the monitor knows of a node.
type NodeState struct {
	Name     string
	Port     int
	Reported string // the state its keeper last reported (primary, secondary, ...)
	Assigned string // the state the monitor wants it in
	Healthy  bool   // the monitor's last health check reached its Postgres
	LSN      string
}

// State is the monitor's view of the formation, as `pg_autoctl show state`
// prints it.
func (c *Cluster) State(ctx context.Context) ([]NodeState, error) {
	rows, err := c.monitorDB.QueryContext(ctx, `
		SELECT nodename, nodeport, reportedstate::text, goalstate::text, health = 1, reportedlsn::text
		FROM pgautofailover.node WHERE formationid = $1 ORDER BY nodeid`, formation)
	if err != nil {
		return nil, fmt.Errorf("monitor state: %w", err)
	}
	defer rows.Close()
	var out []NodeState
	for rows.Next() {
		var s NodeState
		if err := rows.Scan(&s.Name, &s.Port, &s.Reported, &s.Assigned, &s.Healthy, &s.LSN); err != nil {
			return nil, fmt.Errorf("monitor state: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("monitor state: %w", err)
	}
	return out, nil
}

// primaryState reports whether s is a state of a node that takes writes.
func primaryState(s string) bool {
	switch s {
	case "single", "wait_primary", "primary", "join_primary", "apply_settings":
		return true
	}
	return false
}

// ErrNoPrimary: the monitor has no node both assigned and reporting a
// primary's state (a fail-over is under way).
var ErrNoPrimary = errors.New("no primary")

// Primary is the node the monitor holds to be the primary: assigned a
// primary's state and reporting one. Right after a kill it still names the
// dead node, until the monitor notices; WaitPrimary waits for one that
// takes writes.
func (c *Cluster) Primary(ctx context.Context) (*Node, error) {
	states, err := c.State(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range states {
		if primaryState(s.Reported) && primaryState(s.Assigned) {
			return c.node(s.Name)
		}
	}
	return nil, ErrNoPrimary
}

// WaitPrimary waits until the primary the monitor names takes writes (it
// runs, is out of recovery and not read-only, as pg_autoctl keeps a
// promoted standby until the old primary's demotion is certain) and
// returns it.
func (c *Cluster) WaitPrimary(ctx context.Context) (*Node, error) {
	var primary *Node
	err := c.until(ctx, "a writable primary", func(ctx context.Context) (bool, error) {
		n, err := c.Primary(ctx)
		if err != nil {
			return false, nil
		}
		if ok, _ := c.writable(ctx, n); ok {
			primary = n
			return true, nil
		}
		return false, nil
	})
	return primary, err
}

// WaitHealthy waits until the formation is whole again: one node primary,
// the other secondary, both healthy, and the primary's commits wait for
// the standby (synchronous_standby_names is set, so that a commit
// acknowledged is on both nodes). While a standby is being built, it
// asks the primary for a checkpoint every second: pg_basebackup otherwise
// waits for a spread checkpoint, minutes on an idle server.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	return c.until(ctx, "a primary and a synchronous standby", func(ctx context.Context) (bool, error) {
		states, err := c.State(ctx)
		if err != nil || len(states) != len(c.nodes) {
			return false, nil
		}
		var primary *Node
		secondaries := 0
		building := false
		for _, s := range states {
			switch {
			case s.Reported == "primary" && s.Assigned == "primary" && s.Healthy:
				primary, _ = c.node(s.Name)
			case s.Reported == "secondary" && s.Assigned == "secondary" && s.Healthy:
				secondaries++
			case s.Reported == "catchingup" || s.Reported == "wait_standby" || s.Assigned == "catchingup":
				building = true
			}
		}
		if building {
			if p, err := c.Primary(ctx); err == nil {
				_ = c.exec(ctx, p, "postgres", "CHECKPOINT")
			}
		}
		if primary == nil || secondaries != len(c.nodes)-1 {
			return false, nil
		}
		sync, err := c.show(ctx, primary, "synchronous_standby_names")
		return err == nil && sync != "", nil
	})
}

// writable reports whether n takes writes now.
func (c *Cluster) writable(ctx context.Context, n *Node) (bool, error) {
	db, err := sql.Open("pgx", c.adminURL(n, "postgres"))
	if err != nil {
		return false, err
	}
	defer db.Close()
	var ok bool
	err = db.QueryRowContext(ctx, `SELECT NOT pg_is_in_recovery() AND current_setting('default_transaction_read_only') = 'off'`).Scan(&ok)
	return ok, err
}

// show is a setting of a node.
func (c *Cluster) show(ctx context.Context, n *Node, name string) (string, error) {
	db, err := sql.Open("pgx", c.adminURL(n, "postgres"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	var v string
	err = db.QueryRowContext(ctx, "SELECT current_setting($1)", name).Scan(&v)
	return v, err
}

func (c *Cluster) node(name string) (*Node, error) {
	for _, n := range c.nodes {
		if n.Name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no node %q", name)
}

// until polls cond every 200 ms until it holds or ctx ends.
func (c *Cluster) until(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	for {
		step, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, err := cond(step)
		cancel()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Report is the formation's state and recent events and the end of every
// process's log, for a failed test.
func (c *Cluster) Report() string {
	var b strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if c.monitorDB != nil {
		if states, err := c.State(ctx); err == nil {
			for _, s := range states {
				fmt.Fprintf(&b, "%s :%d reported %s, assigned %s, healthy %v, LSN %s\n", s.Name, s.Port, s.Reported, s.Assigned, s.Healthy, s.LSN)
			}
		}
		if events, err := c.Events(ctx, 30); err == nil {
			b.WriteString("--- monitor events\n" + strings.Join(events, "\n") + "\n")
		}
	}
	if c.monitorLog != "" {
		b.WriteString("--- monitor log\n" + readTail(c.monitorLog, 30) + "\n")
	}
	for _, n := range c.nodes {
		b.WriteString("--- " + n.Name + " log\n" + readTail(n.log, 40) + "\n")
	}
	return b.String()
}

// Events are the monitor's last n events, oldest first, one line each.
func (c *Cluster) Events(ctx context.Context, n int) ([]string, error) {
	rows, err := c.monitorDB.QueryContext(ctx, `
		SELECT to_char(eventtime, 'HH24:MI:SS.MS'), nodename, reportedstate::text, goalstate::text, description
		FROM (SELECT * FROM pgautofailover.event ORDER BY eventid DESC LIMIT $1) e ORDER BY eventid`, n)
	if err != nil {
		return nil, fmt.Errorf("monitor events: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var at, node, reported, assigned, desc string
		if err := rows.Scan(&at, &node, &reported, &assigned, &desc); err != nil {
			return nil, fmt.Errorf("monitor events: %w", err)
		}
		out = append(out, fmt.Sprintf("%s %s %s→%s %s", at, node, reported, assigned, desc))
	}
	return out, rows.Err()
}
