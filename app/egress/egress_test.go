package egress

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckIP(t *testing.T) {
	for _, c := range []struct {
		ip                string
		loopback, private bool
		ok                bool
	}{
		{"93.184.216.34", false, false, true},
		{"2606:2800:220:1:248:1893:25c8:1946", false, false, true},
		{"10.0.0.1", false, false, false},
		{"10.0.0.1", true, false, false},
		{"10.0.0.1", false, true, true},
		{"172.16.5.4", false, false, false},
		{"192.168.1.1", false, false, false},
		{"100.64.0.1", false, false, false},
		{"fd00::1", false, false, false},
		{"169.254.169.254", false, false, false},
		{"169.254.169.254", true, false, false},
		{"169.254.169.254", false, true, true},
		{"fe80::1", false, false, false},
		{"::ffff:10.0.0.1", false, false, false},
		{"::ffff:169.254.169.254", false, false, false},
		{"64:ff9b::a00:1", false, false, false},
		{"64:ff9b::a9fe:a9fe", false, false, false},
		{"64:ff9b::5db8:d822", false, false, true},
		{"2002:a00:1::1", false, false, false},
		{"::10.0.0.1", false, false, false},
		{"::169.254.169.254", false, false, false},
		{"::127.0.0.1", false, false, false},
		{"::127.0.0.1", true, false, true},
		{"::93.184.216.34", false, false, true},
		{"64:ff9b:1::5db8:d822", false, false, false},
		{"64:ff9b:1:a00:1::", false, false, false},
		{"64:ff9b:1::5db8:d822", false, true, true},
		{"2002:a00:1::1", false, true, true},
		{"127.0.0.1", false, false, false},
		{"127.0.0.1", true, false, true},
		{"127.0.0.1", false, true, true},
		{"::1", false, false, false},
		{"::1", true, false, true},
		{"0.0.0.0", false, true, false},
		{"0.1.2.3", false, true, false},
		{"::", false, true, false},
		{"224.0.0.1", false, true, false},
		{"255.255.255.255", false, true, false},
		{"ff02::1", false, true, false},
	} {
		err := CheckIP(netip.MustParseAddr(c.ip), c.loopback, c.private)
		if c.ok {
			require.NoError(t, err, "%+v", c)
		} else {
			require.ErrorIs(t, err, ErrRefusedAddress, "%+v", c)
		}
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST.": true, "127.0.0.1": true, "127.9.8.7": true, "::1": true, "[::1]": true,
		"::ffff:127.0.0.1": true, "localhost.example.com": false, "example.com": false, "10.0.0.1": false, "0.0.0.0": false,
	} {
		require.Equal(t, want, IsLoopbackHost(host), host)
	}
}

func TestRange(t *testing.T) {
	for ip, want := range map[string]string{
		"93.184.216.34": "", "127.0.0.1": "", "::1": "", "2606:2800:220:1:248:1893:25c8:1946": "",
		"0.0.0.0": RangeUnspecified, "0.1.2.3": RangeUnspecified, "::": RangeUnspecified,
		"10.0.0.1": RangePrivate, "::ffff:192.168.1.1": RangePrivate, "fd00::1": RangePrivate,
		"100.64.0.1": RangeShared, "169.254.169.254": RangeLinkLocal, "fe80::1": RangeLinkLocal,
		"224.0.0.1": RangeMulticast, "255.255.255.255": RangeMulticast, "ff02::1": RangeMulticast,
	} {
		require.Equal(t, want, Range(netip.MustParseAddr(ip)), ip)
	}
}

func TestCheckIPMessages(t *testing.T) {
	for ip, want := range map[string]string{
		"0.1.2.3":         "webhook: address refused: 0.1.2.3 is unspecified",
		"10.0.0.1":        "webhook: address refused: 10.0.0.1 is private (allow_private is off)",
		"100.64.0.1":      "webhook: address refused: 100.64.0.1 is private (allow_private is off)",
		"169.254.169.254": "webhook: address refused: 169.254.169.254 is link-local (allow_private is off)",
		"127.0.0.1":       "webhook: address refused: 127.0.0.1 is loopback and the URL's host is not",
		"64:ff9b::a00:1":  "webhook: address refused: 10.0.0.1 is private (allow_private is off) (inside 64:ff9b::a00:1)",
	} {
		require.EqualError(t, CheckIP(netip.MustParseAddr(ip), false, false), want, ip)
	}
}
