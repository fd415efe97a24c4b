package main

// `latchkey health` asks a running latchkey whether it is ready, for a
// container's HEALTHCHECK (an image FROM scratch has no curl) or a script:
// exit 0 when GET /health/ready answers 200, 1 otherwise, and one line on
// stderr either way.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/app/config"
)

// healthTimeout bounds the whole check: a service that does not answer in
// it is not healthy (the ready route itself gives the database 2 s).
const healthTimeout = 3 * time.Second

// runHealth runs `latchkey [--config FILE] health [--url URL]`; args
// follow the word health.
func runHealth(configPath string, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("latchkey health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	fs.StringVar(&configPath, "config", configPath, "configuration file (YAML)")
	target := fs.String("url", "", "the ready check's URL, or the service's origin")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "latchkey health: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	ready, err := healthURL(*target, configPath)
	if err != nil {
		fmt.Fprintln(stderr, "latchkey health: "+err.Error())
		return 1
	}
	status, err := probe(ready)
	if err != nil {
		fmt.Fprintf(stderr, "latchkey health: %s: %v\n", ready, err)
		return 1
	}
	if status != http.StatusOK {
		fmt.Fprintf(stderr, "latchkey health: %s: not ready (%d %s)\n", ready, status, http.StatusText(status))
		return 1
	}
	fmt.Fprintf(stderr, "latchkey health: %s: ready\n", ready)
	return 0
}

// healthURL is --url (an origin such as http://127.0.0.1:3000 gets the
// ready route's path), else the ready route on the configured listener:
// its address (loopback when it listens on every interface) and port.
func healthURL(target, configPath string) (string, error) {
	if target != "" {
		u, err := url.Parse(target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("--url %q: not an http:// or https:// URL", target)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/health/ready"
		}
		return u.String(), nil
	}
	cfg, _, err := loadConfig(configPath)
	if err != nil {
		return "", fmt.Errorf("the configuration does not load (so no latchkey serves it; `latchkey check-config` lists why), or pass --url: %s", oneLine(err.Error()))
	}
	return "http://" + net.JoinHostPort(probeHost(cfg), strconv.Itoa(cfg.Port)) + "/health/ready", nil
}

// probeHost is where the configured listener is reached from this machine:
// listen itself, or loopback for every interface.
func probeHost(cfg config.Config) string {
	host := strings.Trim(strings.TrimSpace(cfg.Listen), "[]")
	switch host {
	case "", "0.0.0.0":
		return "127.0.0.1"
	case "::":
		return "::1"
	}
	return host
}

// probe GETs url within healthTimeout, directly (never through a proxy
// from the environment), and returns the status code.
func probe(target string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, err
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, nil
}
