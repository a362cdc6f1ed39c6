package summary

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/results"
)

// Goodput holds per-request bounds in vLLM's sense, a bound a request
// time (results.Field): a request is good when it succeeded and met every
// bound given.
type Goodput map[results.Field]time.Duration

// ParseGoodput reads "ttft:300,tpot:50,e2e:4000" (milliseconds), comma-
// or space-separated as vLLM's --goodput takes them. Keys are the
// latencies of the metric table a request has one value of (ttft,
// ttft_sched, ttfat, tpot, e2e, e2e_sched; vLLM's e2el too).
func ParseGoodput(s string) (Goodput, error) {
	g := Goodput{}
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		k, v, ok := strings.Cut(strings.TrimSpace(part), ":")
		ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil || !(ms > 0 && ms <= 1e9) {
			return nil, fmt.Errorf("%q must look like ttft:300 (a positive number of ms)", part)
		}
		name := strings.ToLower(strings.TrimSpace(k))
		if name == "e2el" {
			name = "e2e"
		}
		m, ok := results.MetricNamed(name)
		if f, err := results.ParseMeasure(name); !ok && err == nil && f.Pct > 0 && f.Metric.Goodput {
			// A percentile is a level's, not a request's.
			return nil, fmt.Errorf("goodput bound %q: a request has one %s, no percentile: write %s:%s "+
				"(a percentile bounds the SLO: --slo %s:%s)", k, f.Metric.Name, f.Metric.Name, strings.TrimSpace(v), f, strings.TrimSpace(v))
		}
		if !ok || !m.Goodput {
			if near := results.Nearest(name, goodputNames()); near != "" {
				return nil, fmt.Errorf("goodput metric %q: did you mean %s?", k, near)
			}
			return nil, fmt.Errorf("goodput metric %q: a request has one value of %s (ms)", k, strings.Join(goodputNames(), ", "))
		}
		g[m.Field] = time.Duration(ms * float64(time.Millisecond))
	}
	return g, nil
}

// goodputNames are the metrics a goodput bound may hold.
func goodputNames() []string {
	var out []string
	for _, m := range results.Metrics {
		if m.Goodput {
			out = append(out, m.Name)
		}
	}
	return out
}

// Set reports whether any bound is given.
func (g Goodput) Set() bool { return len(g) > 0 }

// bounds lists the given bounds in ms by metric, for the result.
func (g Goodput) bounds() map[string]float64 {
	m := map[string]float64{}
	for _, mt := range results.Metrics {
		if d, ok := g[mt.Field]; ok && mt.Goodput {
			m[mt.Name] = float64(d) / 1e6
		}
	}
	return m
}

// good reports whether a finished record meets every bound. A request
// with one output token has no TPOT and meets that bound, as in vLLM; a
// request with no answer meets no bound on the answer.
func (g Goodput) good(r *record.Record) bool {
	if !r.OK() || r.Chunks == 0 {
		return false
	}
	for f, bound := range g {
		if v, ok := r.Time(f); !ok && f != results.FieldTPOT || v > bound {
			return false
		}
	}
	return true
}

// goodputResult summarises the good requests over the window.
func goodputResult(g Goodput, good, finished int64, window float64) *results.Goodput {
	if !g.Set() {
		return nil
	}
	out := &results.Goodput{Bounds: g.bounds(), Good: good, Finished: finished}
	if finished > 0 {
		out.Share = float64(good) / float64(finished)
	}
	if window > 0 {
		out.RequestsPerS = float64(good) / window
	}
	return out
}
