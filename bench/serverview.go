package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kneebench/knee/results"
	"github.com/valyala/fasthttp"
)

// ServerView puts the server's own account of a measured window next to
// the client's: the bundled simulator's /metrics/summary (reset before the
// window, read after), or vLLM's or SGLang's Prometheus metrics (scraped
// before and after, gauges sampled every second in between).
type ServerView struct {
	t          Target
	kind       string // "knee-sim", "vllm", "sglang" or "" when unavailable
	root       string
	metricsURL string
	note       string

	before, after scrape
	sim           *simModelSummary
	simReqs       int64

	mu      sync.Mutex
	gauges  map[string]*results.GaugeStats
	stop    chan struct{}
	sampler sync.WaitGroup
}

// simModelSummary is the part of the simulator's /metrics/summary that knee
// reads (its JSON contract; bench never imports the simulator).
type simModelSummary struct {
	Requests struct {
		Running  int64            `json:"running"`
		Total    int64            `json:"total"`
		Finished map[string]int64 `json:"finished"`
	} `json:"requests"`
	Tokens struct {
		Prompt    int64 `json:"prompt"`
		Generated int64 `json:"generated"`
		Cached    int64 `json:"cached"`
	} `json:"tokens"`
	Server    map[string]simStats `json:"server"`
	Simulated map[string]simStats `json:"simulated"`
	Lag       simStats            `json:"lag"`
	Scheduler *struct {
		Preemptions   int64   `json:"preemptions"`
		PrefixHitRate float64 `json:"prefix_cache_hit_rate"`
		PrefixQueries int64   `json:"prefix_cache_queries"`
	} `json:"scheduler"`
}

type simStats struct {
	Count                              int64
	Mean, Min, P50, P90, P95, P99, Max float64
}

// NewServerView detects what the target publishes. metricsURL overrides the
// Prometheus URL derived from the base URL.
func NewServerView(t Target, metricsURL string) *ServerView {
	root := strings.TrimSuffix(strings.TrimRight(t.BaseURL, "/"), "/v1")
	v := &ServerView{t: t, root: root, metricsURL: metricsURL}
	if v.metricsURL == "" {
		v.metricsURL = root + "/metrics"
		if body, status, err := get(t, root+"/metrics/summary", 5*time.Second); err == nil && status == 200 &&
			json.Valid(body) && strings.Contains(string(body), `"models"`) {
			v.kind = "knee-sim"
			return v
		}
	}
	body, status, err := get(t, v.metricsURL, 5*time.Second)
	if err != nil || status != 200 {
		v.note = "server metrics not available"
		return v
	}
	s, err := parseExposition(body)
	if err != nil {
		v.note = fmt.Sprintf("server metrics not available (%s does not parse: %v)", v.metricsURL, err)
		return v
	}
	for name := range s {
		switch {
		case strings.HasPrefix(name, "vllm:"):
			v.kind = "vllm"
		case strings.HasPrefix(name, "sglang:") && v.kind == "":
			v.kind = "sglang"
		}
	}
	if v.kind == "" {
		v.note = "server metrics not available (no vllm: or sglang: metrics at " + v.metricsURL + ")"
	}
	return v
}

// Kind says which account is available ("" for none).
func (v *ServerView) Kind() string { return v.kind }

// Note explains why no account is available.
func (v *ServerView) Note() string { return v.note }

// Start runs right before the measured window.
func (v *ServerView) Start(ctx context.Context) {
	switch v.kind {
	case "knee-sim":
		_, _, _ = call(v.t, fasthttp.MethodPost, v.root+"/metrics/summary/reset", []byte("{}"), 5*time.Second)
	case "vllm", "sglang":
		v.before = v.scrape()
		v.gauges = map[string]*results.GaugeStats{}
		v.stop = make(chan struct{})
		v.sampler.Add(1)
		go v.sample(ctx)
	}
}

// End runs right after the measured window.
func (v *ServerView) End(ctx context.Context) {
	switch v.kind {
	case "knee-sim":
		body, status, err := get(v.t, v.root+"/metrics/summary", 5*time.Second)
		if err != nil || status != 200 {
			v.note = "the simulator's summary could not be read after the window"
			return
		}
		var all struct {
			Models map[string]simModelSummary `json:"models"`
		}
		if json.Unmarshal(body, &all) != nil {
			v.note = "the simulator's summary did not parse"
			return
		}
		if m, ok := all.Models[v.t.Model]; ok {
			v.sim = &m
		}
		for _, m := range all.Models {
			v.simReqs += m.Requests.Total + m.Requests.Running
		}
	case "vllm", "sglang":
		close(v.stop)
		v.sampler.Wait()
		v.after = v.scrape()
	}
}

func (v *ServerView) scrape() scrape {
	body, status, err := get(v.t, v.metricsURL, 5*time.Second)
	if err != nil || status != 200 {
		return nil
	}
	s, _ := parseExposition(body)
	return s
}

// gaugeNames maps knee's gauge names to each engine's metric names.
var gaugeNames = map[string]map[string][]string{
	"vllm": {
		"running":        {"vllm:num_requests_running"},
		"waiting":        {"vllm:num_requests_waiting"},
		"kv_cache_usage": {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
	},
	"sglang": {
		"running":        {"sglang:num_running_reqs"},
		"waiting":        {"sglang:num_queue_reqs"},
		"kv_cache_usage": {"sglang:token_usage"},
	},
}

// sample reads the gauges every second during the window.
func (v *ServerView) sample(ctx context.Context) {
	defer v.sampler.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-v.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			s := v.scrape()
			if s == nil {
				continue
			}
			v.mu.Lock()
			for name, metrics := range gaugeNames[v.kind] {
				val, ok := s.sum(v.t.Model, metrics...)
				if !ok {
					continue
				}
				g := v.gauges[name]
				if g == nil {
					g = &results.GaugeStats{}
					v.gauges[name] = g
				}
				g.Mean = (g.Mean*float64(g.Samples) + val) / float64(g.Samples+1)
				if g.Samples == 0 || val > g.Max {
					g.Max = val
				}
				g.Samples++
			}
			v.mu.Unlock()
		}
	}
}

func ptr(v float64) *float64 { return &v }

// figure builds a comparison row; delivery is client − server.
func figure(name string, client, server, simulated *float64) results.Figure {
	f := results.Figure{Name: name, Client: client, Server: server, Simulated: simulated}
	if client != nil && server != nil {
		f.Delivery = ptr(*client - *server)
	}
	return f
}

// Fill adds the server's account to a run's result.
func (v *ServerView) Fill(res *results.Run) {
	switch {
	case v.kind == "knee-sim" && v.sim != nil:
		v.fillSim(res)
	case (v.kind == "vllm" || v.kind == "sglang") && v.before != nil && v.after != nil:
		v.fillProm(res)
	default:
		note := v.note
		if note == "" {
			note = "server metrics not available"
		}
		res.Warnings = append(res.Warnings, note)
	}
}

func (v *ServerView) fillSim(res *results.Run) {
	m := v.sim
	s := &results.Server{Source: "knee-sim", Requests: m.Requests.Total, PromptTokens: m.Tokens.Prompt,
		OutputTokens: m.Tokens.Generated}
	ms := func(x float64) *float64 { return ptr(x * 1000) }
	st := res.Stats
	srv, sim := m.Server, m.Simulated
	s.Figures = []results.Figure{
		figure("TTFT p50", ptr(st.TTFT.P50), ms(srv["ttft"].P50), ms(sim["ttft"].P50)),
		figure("TTFT p99", ptr(st.TTFT.P99), ms(srv["ttft"].P99), ms(sim["ttft"].P99)),
		figure("ITL p50", ptr(st.ITL.P50), ms(srv["itl"].P50), ms(sim["itl"].P50)),
		figure("ITL p99", ptr(st.ITL.P99), ms(srv["itl"].P99), ms(sim["itl"].P99)),
		figure("TPOT p50", ptr(st.TPOT.P50), ms(srv["tpot"].P50), ms(sim["tpot"].P50)),
		figure("E2E p50", ptr(st.E2E.P50), ms(srv["e2e"].P50), ms(sim["e2e"].P50)),
		figure("E2E p99", ptr(st.E2E.P99), ms(srv["e2e"].P99), ms(sim["e2e"].P99)),
	}
	if res.WindowSeconds > 0 {
		s.Figures = append(s.Figures, figure("output tok/s", ptr(res.Throughput.OutputTokensPerS),
			ptr(float64(m.Tokens.Generated)/res.WindowSeconds), nil))
	}
	s.Lag = &results.Summary{Count: m.Lag.Count, Mean: m.Lag.Mean * 1000, Min: m.Lag.Min * 1000, P50: m.Lag.P50 * 1000,
		P90: m.Lag.P90 * 1000, P95: m.Lag.P95 * 1000, P99: m.Lag.P99 * 1000, Max: m.Lag.Max * 1000}
	if sc := m.Scheduler; sc != nil {
		s.Preemptions = sc.Preemptions
		if sc.PrefixQueries > 0 {
			s.PrefixHitRate = ptr(sc.PrefixHitRate)
		}
	}
	clientSent := res.Requests.Sent
	if res.Calls != nil {
		clientSent += res.Calls.Started // the warm-up turns
		s.Warnings = append(s.Warnings, "the server's figures include every call's unmeasured warm-up turn; the client's do not")
	}
	if v.simReqs > clientSent {
		s.Warnings = append(s.Warnings, fmt.Sprintf("the server counted %d requests in the window, the client sent %d: other traffic is mixed into the server's figures", v.simReqs, clientSent))
	}
	res.Server = s
}

// promNames are each engine's metric names for the comparison.
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
}

func (v *ServerView) fillProm(res *results.Run) {
	names := promNames[v.kind]
	s := &results.Server{Source: v.kind, BucketEstimates: true}
	model := v.t.Model
	counter := func(key string) (float64, bool) {
		a, ok1 := v.after.sum(model, names[key]...)
		b, ok2 := v.before.sum(model, names[key]...)
		if !ok1 {
			return 0, false
		}
		if !ok2 {
			b = 0
		}
		if a < b {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s went down between the scrapes (a server restart?): counted from zero", names[key][0]))
			return a, true
		}
		return a - b, true
	}
	quant := func(key string, q float64) *float64 {
		a, ok := v.after.histogram(model, names[key]...)
		if !ok {
			return nil
		}
		b, _ := v.before.histogram(model, names[key]...)
		d, reset := a.delta(b)
		if reset {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s was reset between the scrapes: using the after scrape alone", names[key][0]))
		}
		x, ok := d.quantile(q)
		if !ok {
			return nil
		}
		return ptr(x * 1000)
	}
	if n, ok := counter("requests"); ok {
		s.Requests = int64(n)
	}
	if n, ok := counter("prompt"); ok {
		s.PromptTokens = int64(n)
	}
	if n, ok := counter("generation"); ok {
		s.OutputTokens = int64(n)
	}
	if n, ok := counter("preemptions"); ok {
		s.Preemptions = int64(n)
	}
	if h, ok := counter("hits"); ok {
		if q, ok := counter("queries"); ok && q > 0 {
			s.PrefixHitRate = ptr(h / q)
		}
	}
	st := res.Stats
	s.Figures = []results.Figure{
		figure("TTFT p50", ptr(st.TTFT.P50), quant("ttft", 0.5), nil),
		figure("TTFT p99", ptr(st.TTFT.P99), quant("ttft", 0.99), nil),
		figure("ITL p50", ptr(st.ITL.P50), quant("itl", 0.5), nil),
		figure("ITL p99", ptr(st.ITL.P99), quant("itl", 0.99), nil),
		figure("TPOT p50", ptr(st.TPOT.P50), quant("tpot", 0.5), nil),
		figure("E2E p50", ptr(st.E2E.P50), quant("e2e", 0.5), nil),
		figure("E2E p99", ptr(st.E2E.P99), quant("e2e", 0.99), nil),
		figure("queue p50", nil, quant("queue", 0.5), nil),
		figure("queue p99", nil, quant("queue", 0.99), nil),
	}
	if res.WindowSeconds > 0 && s.OutputTokens > 0 {
		s.Figures = append(s.Figures, figure("output tok/s", ptr(res.Throughput.OutputTokensPerS), ptr(float64(s.OutputTokens)/res.WindowSeconds), nil))
	}
	v.mu.Lock()
	if len(v.gauges) > 0 {
		s.Gauges = map[string]results.GaugeStats{}
		for k, g := range v.gauges {
			s.Gauges[k] = *g
		}
	}
	v.mu.Unlock()
	res.Server = s
}
