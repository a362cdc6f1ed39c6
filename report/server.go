package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kneebench/knee/results"
)

// Server writes the client/server/simulated/delivery comparison.
func Server(out io.Writer, s *results.Server) error {
	w := newWrapWriter(out, 9)
	defer w.Flush()
	serverHead(w, s)
	if err := serverFigures(w, s); err != nil {
		return err
	}
	serverTail(w, s)
	return nil
}

// serverTitles name each server view's source and how exact it is.
var serverTitles = map[string]string{"knee-sim": "server view (knee sim /metrics/summary, exact)",
	"vllm":     "server view (vLLM /metrics: means exact, percentiles as the histogram bucket (lo, hi] they fall in, ≈ interpolated)",
	"sglang":   "server view (SGLang /metrics: means exact, percentiles as the histogram bucket (lo, hi] they fall in, ≈ interpolated)",
	"llamacpp": "server view (llama.cpp /metrics counters and per-response timings, exact)"}

// serverHead is the view's source, what the server counted and its cache.
func serverHead(w io.Writer, s *results.Server) {
	title := serverTitles[s.Source]
	switch s.RequestsFrom {
	case "none":
		// (llama.cpp counts none, and Messages answers carry no timings.)
		fmt.Fprintf(w, "%s · no count of requests (the server keeps none, and its answers carried no timings)", title)
	case "timings":
		fmt.Fprintf(w, "%s · %s (one set of timings per answer)", title, results.Plural(int(s.Requests), "request"))
	default:
		fmt.Fprintf(w, "%s · %s", title, results.Plural(int(s.Requests), "request"))
	}
	if s.CachedTokens > 0 {
		fmt.Fprintf(w, ", %s prompt tokens computed and %s taken from its cache, %s output tokens", num(float64(s.PromptTokens), 0),
			num(float64(s.CachedTokens), 0), num(float64(s.OutputTokens), 0))
	} else {
		fmt.Fprintf(w, ", %s prompt and %s output tokens", num(float64(s.PromptTokens), 0), num(float64(s.OutputTokens), 0))
	}
	if s.Preemptions > 0 {
		fmt.Fprintf(w, " · %d preemptions", s.Preemptions)
	}
	if s.PrefixHitRate != nil {
		fmt.Fprintf(w, " · prefix-cache hit rate %s", pct(*s.PrefixHitRate))
	}
	fmt.Fprintln(w)
}

// serverFigures sets each figure's client, server (a bucket when that is all
// the server has), simulated and delivery values side by side.
func serverFigures(w io.Writer, s *results.Server) error {
	header := []string{"ms", "client", "server", "delivery"}
	sim := s.Source == "knee-sim"
	if sim {
		header = []string{"ms", "client", "server", "simulated", "delivery"}
	}
	if len(s.Figures) == 0 {
		// (Nothing both sides timed: every request failed.)
		return nil
	}
	var rows [][]string
	cell := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return ms(*v)
	}
	for _, f := range s.Figures {
		server := cell(f.Server)
		if f.Estimate {
			server = bucketCell(f)
		}
		row := []string{f.Name, cell(f.Client), server}
		if sim {
			row = append(row, cell(f.Simulated))
		}
		rows = append(rows, append(row, cell(f.Delivery)))
	}
	return renderTable(w, header, rows)
}

// serverTail is the simulator's lag, the gauges, LoRA and the warnings.
func serverTail(w io.Writer, s *results.Server) {
	if s.Lag != nil {
		fmt.Fprintf(w, "fidelity server token lag p50 %s ms · p99 %s ms · max %s ms (how late the simulator released tokens against its own schedule)\n",
			ms(s.Lag.P50), ms(s.Lag.P99), ms(s.Lag.Max))
	}
	if len(s.Gauges) > 0 {
		keys := make([]string, 0, len(s.Gauges))
		for k := range s.Gauges {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprint(w, "gauges  ")
		for i, k := range keys {
			g := s.Gauges[k]
			if i > 0 {
				fmt.Fprint(w, " · ")
			}
			fmt.Fprintf(w, "%s mean %.2f max %.2f", k, g.Mean, g.Max)
		}
		fmt.Fprintln(w)
	}
	if l := s.LoRA; l != nil {
		fmt.Fprintf(w, "lora     %s\n", loraLine(l))
	}
	for _, warn := range s.AllWarnings() {
		fmt.Fprintf(w, "warning  %s\n", warn)
	}
}

// loraLine says what vllm:lora_requests_info showed. A server that
// exports it with LoRA on but no adapter asked for (llm-d's always does)
// gets one short clause, not a row of nones.
func loraLine(l *results.ServerLoRA) string {
	slots := results.Plural(l.MaxLoRAs, "adapter slot")
	if len(l.Running) == 0 && len(l.Waiting) == 0 {
		return slots + " · no adapter running or waiting in " + results.Plural(l.Samples, "sample")
	}
	return fmt.Sprintf("%s · running %s · waiting %s · some adapter's requests waited in %d of %d samples",
		slots, orNone(strings.Join(l.Running, ", ")), orNone(strings.Join(l.Waiting, ", ")), l.SamplesWaiting, l.Samples)
}

// orNone is s, or "none" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// bucketCell shows a percentile the server only has as a histogram bucket:
// the bucket, and the interpolated point marked as such.
func bucketCell(f results.Figure) string {
	if f.ServerLow == nil {
		return "-"
	}
	if f.ServerHigh == nil {
		return fmt.Sprintf("> %s", ms(*f.ServerLow))
	}
	point := ""
	if f.Server != nil {
		point = " ≈" + ms(*f.Server)
	}
	return fmt.Sprintf("(%s, %s]%s", ms(*f.ServerLow), ms(*f.ServerHigh), point)
}
