package config

import (
	"fmt"
	"net"
	"strconv"
)

// Metrics is the Prometheus endpoint: off unless Listen is set.
type Metrics struct {
	// Listen is the address of the metrics listener (METRICS_ADDR), e.g.
	// 127.0.0.1:9464; it serves GET /metrics and nothing else, never on
	// the public port. Empty: no metrics.
	Listen string `yaml:"listen"`
}

// Log shapes what latchkey writes to stderr.
type Log struct {
	// Format is text (the default) or json, one JSON object a line
	// (LOG_FORMAT).
	Format string `yaml:"format"`
	// Access writes one info line per request (method, route, status,
	// duration, request id); on by default.
	Access bool `yaml:"access"`
}

// Log formats.
const (
	LogText = "text"
	LogJSON = "json"
)

// applyOperationsEnv layers METRICS_ADDR and LOG_FORMAT over the file.
func (c *Config) applyOperationsEnv(env Env) {
	if v, ok := first(env, "METRICS_ADDR"); ok {
		c.Metrics.Listen = v
	}
	if v, ok := first(env, "LOG_FORMAT"); ok {
		c.Log.Format = v
	}
}

// validateOperations checks the log format and the metrics address: a
// host:port that is not the service's own port, with a warning when it
// listens on every interface (/metrics has no authentication).
func (c *Config) validateOperations(add func(string, ...any)) (warnings []string) {
	switch c.Log.Format {
	case LogText, LogJSON:
	default:
		add("log.format (LOG_FORMAT): %q must be %q or %q", c.Log.Format, LogText, LogJSON)
	}
	if c.Metrics.Listen == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(c.Metrics.Listen)
	n, perr := strconv.Atoi(port)
	switch {
	case err != nil || perr != nil || n < 0 || n > 65535:
		add("metrics.listen (METRICS_ADDR): %q is not an address like 127.0.0.1:9464", c.Metrics.Listen)
	case n == c.Port:
		add("metrics.listen (METRICS_ADDR): port %d is the service's own port; metrics are served on a listener of their own, e.g. 127.0.0.1:9464", n)
	case host == "" || host == "0.0.0.0" || host == "::":
		warnings = append(warnings, fmt.Sprintf("metrics.listen %q listens on every interface and /metrics has no authentication: prefer 127.0.0.1 or an internal address", c.Metrics.Listen))
	}
	return warnings
}
