package serverview

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/results"
	"github.com/valyala/fasthttp"
)

// View puts the server's own account of a measured window next to
// the client's: the bundled simulator's /metrics/summary (reset before the
// window, read after), or vLLM's or SGLang's Prometheus metrics (scraped
// before and after, gauges sampled every second in between).
type View struct {
	t transport.Target
	// role, for one pool of a disaggregated deployment read from a page
	// of every pool's series (a router's, or knee sim's /metrics), picks
	// its series by their role label.
	role       string
	kind       string // "knee-sim", "vllm", "sglang", "llamacpp" or "" when unavailable
	root       string
	metricsURL string
	note       string

	before, after scrape
	sim           *simModelSummary
	simReqs       int64

	mu        sync.Mutex
	odd       string // a scrape that worked despite its status
	scrapeErr string // why the last scrape failed
	gauges    map[string]*results.GaugeStats
	// lora is what vllm:lora_requests_info said through the window.
	lora *results.ServerLoRA
	// timeline is every sample of the gauges, in order, for the time
	// slices.
	timeline []gaugeSample
	// latest is the last sample, kept past the timeline's bound, for
	// a live view.
	latest gaugeSample
	// sampleEvery is how often the gauges are read in the window.
	sampleEvery time.Duration
	stop        chan struct{}
	sampler     sync.WaitGroup
}

// simModelSummary is the part of the simulator's /metrics/summary that knee
// reads (its JSON contract; bench never imports the simulator).
type simModelSummary struct {
	// Since is when the summary was last reset, At when it was read: the
	// server's own interval.
	Since    time.Time `json:"since"`
	At       time.Time `json:"at"`
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
	// Phases splits a disaggregated model's time to first token.
	Phases    map[string]simStats `json:"phases"`
	Scheduler *struct {
		Preemptions   int64   `json:"preemptions"`
		PrefixHitRate float64 `json:"prefix_cache_hit_rate"`
		PrefixQueries int64   `json:"prefix_cache_queries"`
		AdapterLoads  *int64  `json:"adapter_loads"`
	} `json:"scheduler"`
}

type simStats struct {
	Count                              int64
	Mean, Min, P50, P90, P95, P99, Max float64
}

// New detects what the target publishes. metricsURL overrides the
// Prometheus URL derived from the base URL.
func New(t transport.Target, metricsURL string) *View {
	root := transport.RootURL(t.BaseURL)
	v := &View{t: t, root: root, metricsURL: metricsURL, sampleEvery: time.Second}
	if v.metricsURL == "" {
		v.metricsURL = transport.JoinURL(root, "/metrics")
		if body, status, err := transport.Fetch(t, fasthttp.MethodGet, transport.JoinURL(root, "/metrics/summary"), nil, 5*time.Second); err == nil && status == 200 &&
			json.Valid(body) && strings.Contains(string(body), `"models"`) {
			v.kind = "knee-sim"
			return v
		}
	}
	s, why := v.fetch()
	if s == nil {
		v.note = "server metrics not available: " + why
		return v
	}
	for name := range s {
		switch {
		case strings.HasPrefix(name, "vllm:"):
			v.kind = "vllm"
		case strings.HasPrefix(name, "sglang:") && v.kind == "":
			v.kind = "sglang"
		case strings.HasPrefix(name, "llamacpp:") && v.kind == "":
			v.kind = "llamacpp"
		}
	}
	if v.kind == "" {
		v.note = fmt.Sprintf("server metrics not available: GET %s answered %d metric families, none named vllm:, sglang: or llamacpp:", results.RedactURL(v.metricsURL), len(s))
	}
	return v
}

// fetch reads and parses the Prometheus exposition. A body that parses is
// used whatever the status (one vLLM-like server answers 500 with good
// metrics now and then); otherwise why says which URL answered what.
func (v *View) fetch() (scrape, string) { return v.fetchFamilies(nil) }

// fetchFamilies is fetch, keeping only the named families when names is
// not nil (the gauges sampled every second); a page without them is then
// an answer, not a failure.
func (v *View) fetchFamilies(names map[string]bool) (scrape, string) {
	body, status, err := transport.Fetch(v.t, fasthttp.MethodGet, v.metricsURL, nil, 5*time.Second)
	if err != nil {
		return nil, fmt.Sprintf("GET %s failed: %v", results.RedactURL(v.metricsURL), err)
	}
	raw := body // the server's own words, when it refuses
	if names != nil {
		body = pickFamilies(body, names)
	}
	s, perr := parseExposition(body)
	if perr == nil && (len(s) > 0 || names != nil && status == 200) {
		if status != 200 {
			v.mu.Lock()
			v.odd = fmt.Sprintf("GET %s answered HTTP %d with metrics that parse; they were used", results.RedactURL(v.metricsURL), status)
			v.mu.Unlock()
		}
		return s, ""
	}
	if status != 200 {
		return nil, fmt.Sprintf("GET %s answered HTTP %d (%.80q)", results.RedactURL(v.metricsURL), status, strings.TrimSpace(string(raw)))
	}
	if perr == nil {
		return nil, fmt.Sprintf("GET %s answered no metrics", results.RedactURL(v.metricsURL))
	}
	return nil, fmt.Sprintf("GET %s answered HTTP 200 that does not parse as Prometheus text: %v", results.RedactURL(v.metricsURL), perr)
}

// sel picks the view's series.
func (v *View) sel() selector { return selector{model: v.t.Model, role: v.role} }

// Kind says which account is available ("" for none).
func (v *View) Kind() string { return v.kind }

// Note explains why no account is available.
func (v *View) Note() string { return v.note }

// Start runs right before the measured window.
func (v *View) Start(ctx context.Context) {
	switch v.kind {
	case "knee-sim":
		_, _, _ = transport.Fetch(v.t, fasthttp.MethodPost, transport.JoinURL(v.root, "/metrics/summary/reset"), []byte("{}"), 5*time.Second)
		// Its Prometheus gauges, in vLLM's names, for the time slices.
		v.gauges = map[string]*results.GaugeStats{}
		v.stop = make(chan struct{})
		v.sampler.Add(1)
		go v.sample(ctx)
	case "vllm", "sglang", "llamacpp":
		v.before = v.scrape()
		v.gauges = map[string]*results.GaugeStats{}
		v.stop = make(chan struct{})
		v.sampler.Add(1)
		go v.sample(ctx)
	}
}

// End runs right after the measured window.
func (v *View) End(ctx context.Context) {
	switch v.kind {
	case "knee-sim":
		if v.stop != nil {
			close(v.stop)
			v.sampler.Wait()
		}
		body, status, err := transport.Fetch(v.t, fasthttp.MethodGet, transport.JoinURL(v.root, "/metrics/summary"), nil, 5*time.Second)
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
	case "vllm", "sglang", "llamacpp":
		close(v.stop)
		v.sampler.Wait()
		v.after = v.scrape()
	}
}

func (v *View) scrape() scrape { return v.scrapeFamilies(nil) }

func (v *View) scrapeFamilies(names map[string]bool) scrape {
	s, why := v.fetchFamilies(names)
	if s == nil {
		v.mu.Lock()
		v.scrapeErr = why
		v.mu.Unlock()
	}
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
	"llamacpp": {
		"running": {"llamacpp:requests_processing"},
		"waiting": {"llamacpp:requests_deferred"},
		// Older builds only; newer ones dropped the KV gauges.
		"kv_cache_usage": {"llamacpp:kv_cache_usage_ratio"},
	},
}

// sample reads the gauges every sampleEvery (a second) during the window.
func (v *View) sample(ctx context.Context) {
	defer v.sampler.Done()
	t := time.NewTicker(v.sampleEvery)
	defer t.Stop()
	sampled := v.sampledFamilies()
	for {
		select {
		case <-v.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			s := v.scrapeFamilies(sampled)
			if s == nil {
				continue
			}
			v.mu.Lock()
			if v.kind == "vllm" || v.kind == "knee-sim" {
				// knee sim publishes vLLM's LoRA state in vLLM's name.
				sampleLoRA(s, &v.lora)
			}
			names := v.gaugeNames()
			at := gaugeSample{at: time.Now(), values: map[string]float64{}}
			for name, metrics := range names {
				val, ok := s.sum(v.sel(), metrics...)
				if !ok {
					continue
				}
				at.values[name] = val
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
			if len(at.values) > 0 {
				v.latest = at
				if len(v.timeline) < maxTimeline {
					v.timeline = append(v.timeline, at)
				}
			}
			v.mu.Unlock()
		}
	}
}

// gaugeNames is the kind's gauges by knee's names.
func (v *View) gaugeNames() map[string][]string {
	if v.kind == "knee-sim" {
		return gaugeNames["vllm"]
	}
	return gaugeNames[v.kind]
}

// sampledFamilies are the families a sample reads: the gauges, and
// vLLM's LoRA state.
func (v *View) sampledFamilies() map[string]bool {
	names := map[string]bool{loraInfo: true}
	for _, metrics := range v.gaugeNames() {
		for _, m := range metrics {
			names[m] = true
		}
	}
	return names
}
