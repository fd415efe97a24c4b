// Package metricstest reads a Prometheus text exposition (what GET
// /metrics answers) with Prometheus's own parser, for tests that assert
// how much a counter moved.
package metricstest

import (
	"io"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// Samples are the counter, gauge and untyped values of one scrape, and the
// sample counts of its histograms, by name and labels.
type Samples struct {
	values   map[string]float64
	families map[string]*dto.MetricFamily
}

// Parse reads an exposition; a malformed one fails the test.
func Parse(t testing.TB, r io.Reader) Samples {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	require.NoError(t, err, "the exposition parses")
	s := Samples{values: map[string]float64{}, families: families}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			var v float64
			switch {
			case m.Counter != nil:
				v = m.GetCounter().GetValue()
			case m.Gauge != nil:
				v = m.GetGauge().GetValue()
			case m.Histogram != nil:
				v = float64(m.GetHistogram().GetSampleCount())
			case m.Untyped != nil:
				v = m.GetUntyped().GetValue()
			}
			s.values[key(name, labels)] = v
		}
	}
	return s
}

// Value is the sample of name with exactly these labels ("k", "v" pairs);
// 0 when there is none, as for a counter never moved.
func (s Samples) Value(name string, labels ...string) float64 {
	m := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		m[labels[i]] = labels[i+1]
	}
	return s.values[key(name, m)]
}

// Has reports whether the scrape has a family of that name.
func (s Samples) Has(name string) bool { _, ok := s.families[name]; return ok }

// LabelValues are the values label takes among name's samples.
func (s Samples) LabelValues(name, label string) []string {
	var out []string
	for _, m := range s.families[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out = append(out, l.GetValue())
			}
		}
	}
	sort.Strings(out)
	return out
}

func key(name string, labels map[string]string) string {
	parts := make([]string, 0, len(labels))
	for k, v := range labels {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return name + "{" + strings.Join(parts, ",") + "}"
}
