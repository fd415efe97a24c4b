package session

import "testing"

func TestDeviceSummaryAndNetworkHint(t *testing.T) {
	for ua, want := range map[string]string{
		"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0":                                                                  "Firefox 128 on Linux",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1": "Safari 17 on iPhone, iOS",
		"": "",
	} {
		if got := DeviceSummary(ua); got != want {
			t.Errorf("DeviceSummary(%q) = %q, want %q", ua, got, want)
		}
	}
	for ip, want := range map[string]string{
		"203.0.113.77":         "203.0.113.0/24",
		"::ffff:198.51.100.9":  "198.51.100.0/24",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1::/48",
		"not an address":       "",
		"":                     "",
	} {
		if got := NetworkHint(ip); got != want {
			t.Errorf("NetworkHint(%q) = %q, want %q", ip, got, want)
		}
	}
}
