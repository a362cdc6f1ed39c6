package serverview

import (
	"fmt"
	"sort"

	"github.com/kneebench/knee/results"
)

// promNames are each engine's metric names for the comparison; the first
// name of a list is the current one, the others older spellings.
var promNames = map[string]map[string][]string{
	"vllm": {
		"ttft": {"vllm:time_to_first_token_seconds"}, "itl": {"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"},
		"e2e": {"vllm:e2e_request_latency_seconds"}, "queue": {"vllm:request_queue_time_seconds"},
		"tpot":     {"vllm:request_time_per_output_token_seconds"},
		"requests": {"vllm:request_success_total"}, "prompt": {"vllm:prompt_tokens_total"}, "generation": {"vllm:generation_tokens_total"},
		"preemptions": {"vllm:num_preemptions_total"}, "hits": {"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"},
		"queries": {"vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"},
	},
	"sglang": {
		"ttft": {"sglang:time_to_first_token_seconds"}, "itl": {"sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"},
		"e2e": {"sglang:e2e_request_latency_seconds"}, "queue": {"sglang:queue_time_seconds", "sglang:request_queue_time_seconds"},
		"requests": {"sglang:num_requests_total"}, "prompt": {"sglang:prompt_tokens_total"}, "generation": {"sglang:generation_tokens_total"},
		"preemptions": {"sglang:num_retracted_reqs_total"}, "hits": {"sglang:cached_tokens_total"}, "queries": {"sglang:prompt_tokens_total"},
	},
	// llama.cpp's server (--metrics) keeps counters of tokens and of the
	// seconds its slots spent on them, and no latency histograms.
	"llamacpp": {
		"prompt": {"llamacpp:prompt_tokens_total"}, "generation": {"llamacpp:tokens_predicted_total"},
		"prompt_seconds": {"llamacpp:prompt_seconds_total"}, "generation_seconds": {"llamacpp:tokens_predicted_seconds_total"},
		"cached": {"llamacpp:prompt_tokens_cached_total"},
	},
}

// optionalNames are metrics only some builds export, so their absence is
// not worth a word: upstream llama.cpp keeps no cached-token counter.
var optionalNames = map[string]bool{"llamacpp:prompt_tokens_cached_total": true}

// histogramRows are the latency histograms of the comparison: knee's name
// for the row and the client's distribution (nil: no client counterpart).
var histogramRows = []struct {
	key, name string
	client    func(results.Stats) *results.Summary
}{
	{"ttft", "TTFT", func(s results.Stats) *results.Summary { return &s.TTFT }},
	{"itl", "ITL", func(s results.Stats) *results.Summary { return &s.ITL }},
	{"tpot", "TPOT", func(s results.Stats) *results.Summary { return &s.TPOT }},
	{"e2e", "E2E", func(s results.Stats) *results.Summary { return &s.E2E }},
	{"queue", "queue", func(results.Stats) *results.Summary { return nil }},
}

// promWindow is the difference of two scrapes, with notes on what was
// missing or reset.
type promWindow struct {
	v        *View
	names    map[string][]string
	missing  map[string]bool
	warnings []string
}

func (w *promWindow) counter(key string) (float64, bool) {
	names := w.names[key]
	if len(names) == 0 {
		return 0, false
	}
	a, ok := w.v.after.sum(w.v.sel(), names...)
	if !ok {
		if !optionalNames[names[0]] {
			w.missing[names[0]] = true
		}
		return 0, false
	}
	b, ok := w.v.before.sum(w.v.sel(), names...)
	if !ok {
		b = 0
	}
	if a < b {
		w.warnings = append(w.warnings, fmt.Sprintf("%s went down between the scrapes (a server restart?): counted from zero", names[0]))
		return a, true
	}
	return a - b, true
}

func (w *promWindow) histogram(key string) (bucketCounts, bool) {
	names := w.names[key]
	if len(names) == 0 {
		return bucketCounts{}, false
	}
	a, ok := w.v.after.histogram(w.v.sel(), names...)
	if !ok {
		w.missing[names[0]] = true
		return bucketCounts{}, false
	}
	b, _ := w.v.before.histogram(w.v.sel(), names...)
	d, reset := a.delta(b)
	if reset {
		w.warnings = append(w.warnings, fmt.Sprintf("%s was reset between the scrapes: using the after scrape alone", names[0]))
	}
	return d, true
}

func (v *View) fillProm(res *results.Run) {
	w := &promWindow{v: v, names: promNames[v.kind], missing: map[string]bool{}}
	s := &results.Server{Source: v.kind, BucketEstimates: v.kind != "llamacpp"}
	requests, counted := w.counter("requests")
	s.Requests = int64(requests)
	w.counters(s)
	w.histograms(s, res.Stats)
	if v.kind == "llamacpp" {
		v.llamaFigures(w, s, res)
	}
	v.gaugesInto(s, w)
	for name := range w.missing {
		s.Missing = append(s.Missing, name)
	}
	sort.Strings(s.Missing)
	if len(s.Missing) > 0 {
		w.warnings = append(w.warnings, fmt.Sprintf("the server does not export %d of the metrics knee reads (%v): their rows show -", len(s.Missing), s.Missing))
	}
	s.Warnings = w.warnings
	mixed := false
	if counted {
		mixed = s.CheckTraffic(res, s.Requests, true)
	} else {
		s.RequestsFrom = "none"
		if tm := res.ServerTimings; tm != nil && tm.Requests > 0 {
			// llama.cpp counts no requests; each answer carried its timings.
			s.Requests, s.RequestsFrom = tm.Requests, "timings"
		}
		mixed = s.CheckTraffic(res, 0, false)
		mixed = s.CheckTokenTraffic(res) || mixed
	}
	if mixed {
		s.DropDelivery()
	} else {
		s.CheckTTFTGap()
	}
	res.Server = s
}

// counters reads the window's token, preemption and prefix-cache counters.
func (w *promWindow) counters(s *results.Server) {
	if n, ok := w.counter("prompt"); ok {
		s.PromptTokens = int64(n)
	}
	if n, ok := w.counter("generation"); ok {
		s.OutputTokens = int64(n)
	}
	if n, ok := w.counter("preemptions"); ok {
		s.Preemptions = int64(n)
	}
	if h, ok := w.counter("hits"); ok {
		if q, ok := w.counter("queries"); ok && q > 0 {
			s.PrefixHitRate = ptr(h / q)
		}
	}
}

// histograms sets each latency the server buckets beside the client's:
// the mean, and p50 and p99 as the bucket they fall in.
func (w *promWindow) histograms(s *results.Server, st results.Stats) {
	for _, row := range histogramRows {
		if len(w.names[row.key]) == 0 {
			continue
		}
		h, ok := w.histogram(row.key)
		client := row.client(st)
		pick := func(f func(results.Summary) float64) *float64 {
			if client == nil || client.Count == 0 {
				return nil
			}
			return ptr(f(*client))
		}
		if !ok || h.count <= 0 {
			s.Figures = append(s.Figures, figure(row.name+" mean", pick(func(x results.Summary) float64 { return x.Mean }), nil, nil))
			continue
		}
		mean, _ := h.mean()
		s.Figures = append(s.Figures, figure(row.name+" mean", pick(func(x results.Summary) float64 { return x.Mean }), ptr(mean*1000), nil))
		for _, q := range []struct {
			label string
			q     float64
			pick  func(results.Summary) float64
		}{{"p50", 0.5, func(x results.Summary) float64 { return x.P50 }}, {"p99", 0.99, func(x results.Summary) float64 { return x.P99 }}} {
			lo, hi, _ := h.bucketOf(q.q)
			point, _ := h.quantile(q.q)
			s.Figures = append(s.Figures, bucketFigure(row.name+" "+q.label, pick(q.pick), lo, hi, point))
		}
	}
}

// gaugesInto copies the gauges sampled over the window, the LoRA view and
// any oddity seen in the scrapes. No server rate: Prometheus counters
// carry no interval of the server's own, and a rate over the client's
// window would only restate the client's.
func (v *View) gaugesInto(s *results.Server, w *promWindow) {
	v.mu.Lock()
	if len(v.gauges) > 0 {
		s.Gauges = map[string]results.GaugeStats{}
		for k, g := range v.gauges {
			s.Gauges[k] = *g
		}
	}
	s.LoRA = v.lora
	odd := v.odd
	v.mu.Unlock()
	if odd != "" {
		w.warnings = append(w.warnings, odd)
	}
}

// llamaFigures adds what llama.cpp's counters and per-response timings
// tell: its time per prompt and per generated token, exact, not bucketed.
func (v *View) llamaFigures(w *promWindow, s *results.Server, res *results.Run) {
	if c, ok := w.counter("cached"); ok && c+float64(s.PromptTokens) > 0 {
		s.CachedTokens = int64(c)
		s.PrefixHitRate = ptr(c / (c + float64(s.PromptTokens)))
	}
	if sec, ok := w.counter("prompt_seconds"); ok && s.PromptTokens > 0 {
		s.Figures = append(s.Figures, figure("prefill ms/token", nil, ptr(1000*sec/float64(s.PromptTokens)), nil))
	}
	if sec, ok := w.counter("generation_seconds"); ok && s.OutputTokens > 0 {
		s.Figures = append(s.Figures, figure("decode ms/token", nil, ptr(1000*sec/float64(s.OutputTokens)), nil))
	}
	if tm := res.ServerTimings; tm != nil && tm.Requests > 0 {
		s.Figures = append(s.Figures,
			figure("prefill p50", nil, ptr(tm.PromptMs.P50), nil),
			figure("prefill p99", nil, ptr(tm.PromptMs.P99), nil))
		if tm.TPOT.Count > 0 && res.Stats.TPOT.Count > 0 {
			s.Figures = append(s.Figures,
				figure("TPOT p50", ptr(res.Stats.TPOT.P50), ptr(tm.TPOT.P50), nil),
				figure("TPOT p99", ptr(res.Stats.TPOT.P99), ptr(tm.TPOT.P99), nil))
		}
	}
}
