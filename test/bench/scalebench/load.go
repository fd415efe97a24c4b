package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// stat is one load's throughput, latency and the CPU spent meanwhile.
type stat struct {
	N        int
	RPS      float64
	P50, P99 time.Duration
	Errors   int
	FirstBad string // the first failed answer
	CPU      cpuUse // latchkey's and PostgreSQL's CPU during the load (cpu.go)
	// Statements are PostgreSQL's costliest statements during the load
	// (statements.go); none on SQLite.
	Statements []statement
	Elapsed    time.Duration
	lat        []time.Duration // every call's time, sorted: merge's; nil once merged
}

// op is one measured request, or round trip of requests, by client w over
// tr (its own connections); an error counts it as failed.
type op func(w int, tr http.RoundTripper) error

func load(o options, url string, cookie func() string) stat {
	stop := make(chan struct{})
	time.AfterFunc(o.Duration, func() { close(stop) })
	return loadUntil(o, url, cookie, stop)
}

// loadUntil runs o.Conns clients on url until stop is closed.
func loadUntil(o options, url string, cookie func() string, stop <-chan struct{}) stat {
	return runOps(o.Conns, stop, getOK(url, cookie))
}

// getOK is a GET of url (with cookie() when not nil) answered 200.
func getOK(url string, cookie func() string) op {
	return func(_ int, tr http.RoundTripper) error {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if cookie != nil {
			req.Header.Set("Cookie", cookie())
		}
		res, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return errors.New(res.Status)
		}
		return nil
	}
}

// runOps runs conns clients, each repeating do on its own connections,
// until stop is closed, and times every call.
func runOps(conns int, stop <-chan struct{}, do op) stat {
	var mu sync.Mutex
	var lat []time.Duration
	var errs int
	var firstBad string
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &http.Transport{MaxIdleConnsPerHost: 1, DialContext: (&net.Dialer{}).DialContext}
			defer tr.CloseIdleConnections()
			var mine []time.Duration
			bad := 0
			for {
				select {
				case <-stop:
					mu.Lock()
					lat, errs = append(lat, mine...), errs+bad
					mu.Unlock()
					return
				default:
				}
				t0 := time.Now()
				err := do(w, tr)
				mine = append(mine, time.Since(t0))
				if err != nil {
					bad++
					mu.Lock()
					if firstBad == "" {
						firstBad = err.Error()
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	slices.Sort(lat)
	st := stat{N: len(lat), RPS: float64(len(lat)) / el.Seconds(), Errors: errs, FirstBad: firstBad, Elapsed: el, lat: lat}
	st.percentiles()
	return st
}

// percentiles sets P50 and P99 from the sorted times.
func (s *stat) percentiles() {
	if len(s.lat) > 0 {
		s.P50, s.P99 = s.lat[len(s.lat)/2], s.lat[len(s.lat)*99/100]
	}
}
