// Package testport hands tests TCP ports to give to the processes they
// start (latchkey, PostgreSQL, proxies).
//
// A port found by listening on :0 and closing comes from the kernel's
// ephemeral range, the same range every outgoing connection on the machine
// takes its local port from; between the test closing it and the child
// binding it, a connection made by any other test can take it ("bind:
// address already in use", seen in CI). Ports handed out here come from
// below that range, are checked free on every interface, and are never
// handed out twice by one test process.
package testport

import (
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"testing"
)

// The range is below Linux's default ephemeral range (32768–60999). Node's
// test helper uses 30000–32767, so the two never meet.
const (
	low  = 20000
	high = 30000
)

// The record of ports handed out is per process by nature: parallel tests
// in one package share it.
var (
	mu     sync.Mutex
	issued = map[int]bool{}
)

// Free returns a port nothing listens on now and no other caller in this
// process has been given.
func Free() (int, error) {
	mu.Lock()
	defer mu.Unlock()
	start := low + rand.IntN(high-low)
	for i := range high - low {
		p := low + (start-low+i)%(high-low)
		if issued[p] || !bindable(p) {
			continue
		}
		issued[p] = true
		return p, nil
	}
	return 0, errors.New("testport: no free port between 20000 and 30000")
}

// MustFree is Free for a test: it fails the test when no port is free.
func MustFree(t testing.TB) int {
	t.Helper()
	p, err := Free()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// bindable reports whether p can be bound both on loopback and on every
// interface (latchkey listens on ":PORT").
func bindable(p int) bool {
	for _, host := range []string{"127.0.0.1", ""} {
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			return false
		}
		_ = l.Close()
	}
	return true
}
