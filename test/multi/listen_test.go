package multi_test

import (
	"net"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// LISTEN binds the service to one address, with PORT's port, for a
// service behind a proxy on the same host: with LISTEN=127.0.0.1 another
// loopback address of the machine (127.0.0.2; Linux answers the whole
// 127/8) is refused, while without LISTEN the same address answers, as
// every interface does. An IPv6 address works too. A LISTEN with a port
// of its own is refused at start-up, naming the fix.
func TestListenBindsOneAddress(t *testing.T) {
	c := newCluster(t, "postgres://latchkey@127.0.0.1/unused") // the instances run on SQLite
	file := c.sqliteURL("listen.db")

	everywhere := c.startWith("every interface", file)
	requireAnswers(t, everywhere.origin, "127.0.0.2")

	local := c.startWith("loopback", file, "LISTEN=127.0.0.1")
	port := requireAnswers(t, local.origin, "127.0.0.1")
	require.Contains(t, local.logs.String(), `msg="latchkey listening" addr=127.0.0.1:`+port)
	_, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.2", port), 5*time.Second)
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "nothing listens on 127.0.0.2")

	v6port := freePort(t)
	v6, err := c.spawn("ipv6", v6port, append(c.env(v6port, file), "LISTEN=[::1]"))
	require.NoError(t, err)
	v6.origin = "http://[::1]:" + strconv.Itoa(v6port)
	v6.waitReady(t)
	_, err = net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(v6port)), 5*time.Second)
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "nothing listens on IPv4")

	badPort := freePort(t)
	bad := c.run("port in LISTEN", append(c.env(badPort, file), "LISTEN=127.0.0.1:"+strconv.Itoa(badPort)))
	require.Equal(t, 1, bad.exitCode(t))
	require.Contains(t, bad.logs.String(), `listen (LISTEN): \"127.0.0.1:`+strconv.Itoa(badPort)+`\" names a port; listen takes the address alone (e.g. 127.0.0.1) and port (PORT) the port`)
	require.NotContains(t, bad.logs.String(), "latchkey listening")
}

// requireAnswers checks that GET /csrf answers at host on origin's port,
// and returns the port.
func requireAnswers(t *testing.T, origin, host string) string {
	t.Helper()
	u := mustURL(t, origin)
	target := "http://" + net.JoinHostPort(host, u.Port()) + basePath + "/csrf"
	client := &http.Client{Timeout: patience}
	defer client.CloseIdleConnections()
	res, err := client.Get(target)
	require.NoError(t, err, "GET %s", target)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, target)
	return u.Port()
}
