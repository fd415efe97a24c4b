package pghatest

// How fast a dead primary is replaced, and why these values.
//
// With pg_auto_failover's defaults a dead primary is replaced after about
// 50 s: the monitor checks each node every 5 s (health_check_period), with
// a 5 s connect time-out and 2 retries 2 s apart; it then still waits for
// the node's keeper to have been silent for 20 s
// (node_considered_unhealthy_timeout, both conditions are needed); and once
// the standby is promoted (read-only still), it waits 30 s
// (primary_demote_timeout) for the old primary to demote itself before the
// new one may take writes — the old one cannot report that it did when its
// host is gone.
//
// The tests' nodes are processes on loopback: a dead one refuses a
// connection at once and a live one answers in milliseconds, and its
// keeper reports to the monitor every second. So:
//
//   - the monitor checks every second, with a 1 s connect time-out and one
//     retry half a second later: a dead node is marked unhealthy within
//     about 2 s;
//   - a node is unhealthy once its keeper has also been silent for 3 s
//     (three missed reports; a busy CI machine can delay one or two);
//   - a primary that is cut off from the monitor and its standby demotes
//     itself after 3 s (the keeper's timeout.network_partition_timeout),
//     so the monitor may give the standby the writes 5 s after asking the
//     old primary to stop (primary_demote_timeout): 2 s more than the old
//     primary needs to have stopped, as in pg_auto_failover's defaults (30
//     against 20) the monitor's wait is the longer one, so that two
//     primaries never take writes at once.
//
// Measured on a 2-core machine: writable on the standby 8.5–9.5 s after
// kill -9 of the primary's host (about 2 s to mark it unhealthy, 2 s more
// for the keeper's silence, 1 s to promote read-only, 5 s demote time-out);
// a planned switchover (pg_autoctl perform switchover) moves the writes in
// about 1 s, as the old primary reports its own demotion at once.
//
// A production deployment keeps larger values: its nodes are on other
// hosts, behind networks that pause. The same ratios hold there.
func monitorSettings() []setting {
	return []setting{
		{"pgautofailover.health_check_period", "1000"},               // ms, default 5000
		{"pgautofailover.health_check_timeout", "1000"},              // ms, default 5000
		{"pgautofailover.health_check_max_retries", "1"},             // default 2
		{"pgautofailover.health_check_retry_delay", "500"},           // ms, default 2000
		{"pgautofailover.node_considered_unhealthy_timeout", "3000"}, // ms, default 20000
		{"pgautofailover.primary_demote_timeout", "5000"},            // ms, default 30000
		// No fail-over in the first 10 s after the monitor starts (its
		// nodes may not have reported yet): a test may kill a node sooner.
		{"pgautofailover.startup_grace_period", "2000"}, // ms, default 10000
		// pg_autoctl sizes shared_buffers at a quarter of the machine's memory;
		// three servers of a test need little.
		{"shared_buffers", "'128MB'"},
	}
}

// keeperSettings are `pg_autoctl config set` values of every data node.
func keeperSettings() []setting {
	return []setting{
		{"timeout.network_partition_timeout", "3"}, // s, default 20: see above
	}
}

// nodeSettings are PostgreSQL settings of the data nodes, appended to
// postgresql.auto.conf (read after pg_autoctl's own file, so they win).
func nodeSettings() []setting {
	return []setting{
		{"shared_buffers", "'128MB'"},
		// Two latchkey instances, the test's own connections and replication.
		{"max_connections", "200"},
	}
}

type setting struct{ name, value string }
