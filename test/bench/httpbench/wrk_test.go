package main

import (
	"testing"
	"time"
)

// A report of Debian's wrk 4.1 with --latency, errors included.
const wrkReport = `Running 5s test @ http://127.0.0.1:40001/api/auth/session
  2 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.38ms    3.03ms  61.29ms   91.86%
    Req/Sec    12.51k     1.98k   16.77k    71.00%
  Latency Distribution
     50%    1.57ms
     75%    2.61ms
     90%    4.50ms
     99%   15.03ms
  124512 requests in 5.00s, 40.15MB read
  Socket errors: connect 0, read 0, write 0, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:  24902.13
Transfer/sec:      8.03MB
`

func TestParseWrk(t *testing.T) {
	r, err := parseWrk(wrkReport)
	if err != nil {
		t.Fatal(err)
	}
	want := wrkResult{RPS: 24902.13, P50: 1570 * time.Microsecond, P99: 15030 * time.Microsecond,
		Requests: 124512, Non2xx: 7, SocketErr: "connect 0, read 0, write 0, timeout 3"}
	if r != want {
		t.Errorf("parseWrk = %+v, want %+v", r, want)
	}
	for _, c := range []struct {
		num, unit string
		want      time.Duration
	}{{"850.00", "us", 850 * time.Microsecond}, {"1.20", "s", 1200 * time.Millisecond}, {"1.00", "m", time.Minute}} {
		if d, _ := wrkDuration(c.num, c.unit); d != c.want {
			t.Errorf("wrkDuration(%s%s) = %v, want %v", c.num, c.unit, d, c.want)
		}
	}
	if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused\n"); err == nil {
		t.Error("a failed run parsed")
	}
}
