package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
	"github.com/spf13/cobra"
)

// targetFlags are the flags that say which endpoint to drive.
type targetFlags struct {
	baseURL   string
	model     string
	apiKey    string
	endpoint  string
	headers   []string
	extraBody string
	ignoreEOS bool
	timeout   time.Duration
	retries   int

	requestTimeout time.Duration
	idleConns      time.Duration
}

func (f *targetFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.baseURL, "base-url", os.Getenv("OPENAI_BASE_URL"), "API root of the target, e.g. http://host:8000/v1 (default $OPENAI_BASE_URL)")
	fs.StringVar(&f.model, "model", "", "model name (default: the first id from GET /v1/models)")
	fs.StringVar(&f.apiKey, "api-key", os.Getenv("OPENAI_API_KEY"), "API key sent as a Bearer token (default $OPENAI_API_KEY; never printed or written)")
	fs.StringVar(&f.endpoint, "endpoint", "chat", "chat (/v1/chat/completions), completions (/v1/completions) or generate (SGLang's native /generate)")
	fs.StringArrayVar(&f.headers, "header", nil, "extra request header K:V (repeatable)")
	fs.StringVar(&f.extraBody, "extra-body", "", `JSON object merged into every request body, e.g. '{"ignore_eos": true}'`)
	fs.BoolVar(&f.ignoreEOS, "ignore-eos", false, "ask for every request's max_tokens, whatever the model's end-of-sequence token says (ignore_eos, which vLLM, SGLang, llama.cpp and knee sim take; not OpenAI's API); on by default against the built-in target")
	fs.DurationVar(&f.timeout, "timeout", 60*time.Second, "time allowed before the first byte of a response and then between content chunks; SSE comments do not reset it (0: none)")
	fs.DurationVar(&f.requestTimeout, "request-timeout", 10*time.Minute, "total time allowed for one request, send to end of stream (0: none)")
	fs.DurationVar(&f.idleConns, "idle-conn-timeout", transport.DefaultIdleConnTimeout, "how long an idle connection is kept for reuse (below uvicorn's 5 s keep-alive)")
	fs.IntVar(&f.retries, "retries", 0, "retry 429, 503 and connection errors this many times (exponential backoff honouring Retry-After); first-attempt outcomes are reported too")
}

// validate checks the flags that need no network.
func (f *targetFlags) validate() error {
	if !slices.Contains(transport.Endpoints, transport.Endpoint(f.endpoint)) {
		return usageErr("--endpoint must be chat, completions or generate (SGLang's native API), got %q", f.endpoint)
	}
	if f.timeout < 0 || f.retries < 0 || f.requestTimeout < 0 || f.idleConns < 0 {
		return usageErr("--timeout, --request-timeout, --idle-conn-timeout and --retries must not be negative")
	}
	if f.retries > 100 {
		return usageErr("--retries %d is absurd; at most 100", f.retries)
	}
	if f.baseURL != "" {
		if err := checkBaseURL(f.baseURL); err != nil {
			return err
		}
	}
	for _, h := range f.headers {
		if k, _, ok := strings.Cut(h, ":"); !ok || strings.TrimSpace(k) == "" {
			return usageErr("--header %q must look like Name:value", h)
		}
	}
	if f.extraBody != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(f.extraBody), &m); err != nil {
			return usageErr("--extra-body must be a JSON object: %v", err)
		}
		// knee streams and names the model itself; a body that changed
		// either would measure something else than it reports.
		for _, k := range []string{"stream", "model"} {
			if _, ok := m[k]; ok {
				return usageErr("--extra-body may not set %q (knee always streams; use --model)", k)
			}
		}
		if _, ok := m["ignore_eos"]; ok && f.ignoreEOS {
			return usageErr("--extra-body sets ignore_eos and --ignore-eos is given: give one")
		}
	}
	return nil
}

// target builds the bench target for a base URL.
func (f *targetFlags) target(baseURL string) transport.Target {
	t := transport.Target{
		BaseURL: baseURL, APIKey: f.apiKey, Endpoint: transport.Endpoint(f.endpoint), Model: f.model,
		ExtraBody: json.RawMessage(f.extraBody), IgnoreEOS: f.ignoreEOS, Timeout: f.timeout, UserAgent: "knee/" + version(), Retries: f.retries,
		RequestTimeout: f.requestTimeout, IdleConnTimeout: f.idleConns,
	}
	for _, h := range f.headers {
		k, v, _ := strings.Cut(h, ":")
		t.Headers = append(t.Headers, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return t
}

// config records the target flags with secrets redacted.
func (f *targetFlags) config(baseURL, model string) results.Config {
	c := results.Config{BaseURL: results.RedactURL(baseURL), Model: model, Endpoint: f.endpoint, ExtraBody: results.RedactJSON(f.extraBody), IgnoreEOS: f.ignoreEOS, TimeoutS: f.timeout.Seconds()}
	if f.apiKey != "" {
		c.APIKey = results.Redacted
	}
	if len(f.headers) > 0 {
		c.Headers = map[string]string{}
		for _, h := range f.headers {
			k, v, _ := strings.Cut(h, ":")
			k = strings.TrimSpace(k)
			if results.Sensitive(k) {
				v = results.Redacted
			}
			c.Headers[k] = strings.TrimSpace(v)
		}
	}
	return c
}

// resolved is a target ready to be driven.
type resolved struct {
	target  transport.Target
	builtin bool
	stop    func()
	// contextTokens is the model's context as its server lists it (0:
	// not said).
	contextTokens int
}

// resolve finds the model when none was given. With no base URL at all the
// caller starts the built-in simulator instead (see builtinTarget).
func (f *targetFlags) resolve(ctx context.Context, c *cobra.Command, sim *simFlags) (*resolved, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	r := &resolved{stop: func() {}}
	if f.apiKey != "" {
		for _, h := range f.headers {
			if k, _, _ := strings.Cut(h, ":"); strings.EqualFold(strings.TrimSpace(k), "Authorization") {
				fmt.Fprintln(c.ErrOrStderr(), "knee: warning: --header Authorization replaces the Bearer token of --api-key (or $OPENAI_API_KEY)")
			}
		}
	}
	base := f.baseURL
	if base == "" {
		// The built-in target's answers run to max_tokens unless told.
		if !c.Flags().Changed("ignore-eos") {
			f.ignoreEOS = true
		}
		s, err := startBuiltinSim(ctx, c, sim)
		if err != nil {
			return nil, withCode(ExitRuntime, err)
		}
		base, r.builtin, r.stop = s.baseURL, true, s.stop
	}
	r.target = f.target(base)
	models, err := transport.ListModelInfo(ctx, r.target)
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = m.ID
	}
	switch {
	case errors.Is(err, transport.ErrRedirect):
		r.stop()
		return nil, usageErr("%v", err)
	case err != nil && r.target.Model == "":
		r.stop()
		return nil, withCode(ExitRuntime, err)
	case err != nil && !errors.As(err, new(*transport.ModelsStatusError)):
		// Nothing answered at all: the target is down or unreachable.
		r.stop()
		return nil, withCode(ExitRuntime, err)
	case err != nil:
		// The model was named; a server without a model list can still
		// be measured.
		fmt.Fprintf(c.ErrOrStderr(), "knee: could not check --model %s against the server's list: %v\n", r.target.Model, err)
	case r.target.Model == "":
		if len(ids) == 0 {
			r.stop()
			return nil, withCode(ExitRuntime, fmt.Errorf("%s/models lists no model; give --model", results.RedactURL(strings.TrimRight(base, "/"))))
		}
		r.target.Model = ids[0]
	case !slices.Contains(ids, r.target.Model):
		r.stop()
		return nil, usageErr("--model %q is not served by %s (it serves: %s)", r.target.Model, results.RedactURL(base), strings.Join(ids, ", "))
	}
	for _, m := range models {
		if m.ID == r.target.Model {
			r.contextTokens = m.ContextTokens
		}
	}
	return r, nil
}

// fitsContext refuses, before the first request, a workload whose
// longest request cannot fit the model's context as its server lists it:
// every such request would fail (vLLM answers 400; some servers reset the
// connection).
func (r *resolved) fitsContext(longest int, what string) error {
	if r.contextTokens <= 0 || longest <= r.contextTokens {
		return nil
	}
	return usageErr("%s is %d tokens, past the %d-token context %s lists for %s", what, longest, r.contextTokens,
		results.RedactURL(r.target.BaseURL)+"/models", r.target.Model)
}

// minBurstiness is the burstiest gamma shape knee draws: at 0.01 a 5 s
// window at 2/s holds at most about 120 arrivals in 50 seeds (12 times
// the 10 asked), at 0.001 about 830, and below that the sampler
// underflows to gaps of zero.
const minBurstiness = 0.01

// loadFlags say how much load to offer and what to send.
type loadFlags struct {
	concurrency    int
	rate           float64
	burstiness     float64
	maxConcurrency int
	requests       int
	duration       time.Duration
	warmup         int
	seed           uint64
	inputTokens    int
	dataset        string
	prompt         string
	maxTokens      int
	drain          time.Duration
	noCalibrate    bool
	data           datasetFlags
	lengths        lengthFlags
	goodput        string
	prefixTokens   int
	prefixPool     int
}

func (f *loadFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.IntVar(&f.concurrency, "concurrency", 0, "closed loop: this many streams, each sending its next request when its previous one ends")
	fs.Float64Var(&f.rate, "rate", 0, "open loop: arrivals per second (Poisson; see --burstiness)")
	fs.DurationVar(&f.duration, "duration", 0, "length of the measured window")
	f.registerShared(c)
	c.MarkFlagsMutuallyExclusive("rate", "concurrency")
}

// registerShared adds the flags that run and sweep share.
func (f *loadFlags) registerShared(c *cobra.Command) {
	fs := c.Flags()
	fs.Float64Var(&f.burstiness, "burstiness", 1, "gamma shape of open-loop gaps: 1 is Poisson, below 1 burstier, above 1 more regular")
	fs.IntVar(&f.maxConcurrency, "max-concurrency", 0, "open loop: cap on requests in flight; arrivals wait for a slot, and the wait is measured")
	switch windowFlag(c) {
	case "--duration":
		fs.IntVar(&f.requests, "requests", 0, "measured requests (default 100 when --duration is not given)")
	case "--window":
		fs.IntVar(&f.requests, "requests", 0, "not used: a plan's predictions are bounded by --window")
		_ = fs.MarkHidden("requests")
	default:
		fs.IntVar(&f.requests, "requests", 0, "measured requests per level, instead of --step-duration")
	}
	fs.IntVar(&f.warmup, "warmup", -1, "unmeasured warm-up requests (default: one per concurrent stream)")
	hideDefault(fs, "warmup")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for arrivals and prompts")
	fs.IntVar(&f.inputTokens, "input-tokens", 0, "synthetic prompts of about N tokens, different for every request")
	fs.StringVar(&f.dataset, "dataset", "", "prompts from a file: prompt JSONL, OpenAI chat JSONL or ShareGPT JSON (see --dataset-format), cycled")
	fs.StringVar(&f.prompt, "prompt", "Write a short story about a lighthouse keeper.", "the prompt sent when neither --input-tokens nor --dataset is given")
	fs.IntVar(&f.maxTokens, "max-tokens", 128, "max_tokens of every request (a dataset line may override it)")
	fs.DurationVar(&f.drain, "drain-timeout", time.Minute, "time allowed after the window for requests still running; those cut are counted as interrupted (0: wait for all)")
	fs.BoolVar(&f.noCalibrate, "no-calibrate", false, "send --input-tokens as knee's own filler count instead of calibrating it against the server's prompt_tokens")
	f.data.register(c)
	f.lengths.register(c)
	fs.IntVar(&f.prefixTokens, "prefix-tokens", 0, "synthetic prompts: open every prompt with a shared prefix of N tokens (before --input-tokens of its own), as GuideLLM's prefix buckets")
	fs.IntVar(&f.prefixPool, "prefix-pool", 1, "with --prefix-tokens: how many different prefixes requests draw from")
	fs.StringVar(&f.goodput, "goodput", "", "count the requests meeting every bound, as vLLM's goodput, e.g. ttft:300,tpot:50,e2e:4000 (ms; also ttft_sched, e2e_sched)")
	c.MarkFlagsMutuallyExclusive("input-tokens", "dataset")
}

// build validates the flags and returns the load and what it sends.
func (f *loadFlags) build(c *cobra.Command) (driver.Load, bench.Workload, error) {
	w := bench.Workload{MaxTokens: f.maxTokens, NoCalibrate: f.noCalibrate}
	if err := f.check(c); err != nil {
		return driver.Load{}, w, err
	}
	// A dataset is read first: a trace sets the arrivals itself.
	var pending *bench.DatasetFile
	if f.dataset != "" {
		var err error
		if pending, err = f.data.parse(f.dataset); err != nil {
			return driver.Load{}, w, err
		}
		if rate := pending.TraceRate(); rate > 0 {
			if f.concurrency > 0 {
				return driver.Load{}, w, usageErr("--dataset %s is a trace: its timestamps are the arrivals, so --concurrency does not apply (--max-concurrency caps requests in flight)", f.dataset)
			}
			if f.rate == 0 {
				f.rate = rate * f.data.speedup
			}
			if !c.Flags().Changed("requests") {
				f.requests = 0
			}
		}
	}
	if f.concurrency == 0 && f.rate == 0 {
		f.concurrency = 1
	}
	if !(f.burstiness >= minBurstiness && f.burstiness <= 1e6) {
		// Below this the gamma draws gaps of zero: at 1e-6, 131,998/s were
		// offered for 2/s asked.
		return driver.Load{}, w, usageErr("--burstiness must be between %g (very bursty) and 1000000 (all but constant), got %g", minBurstiness, f.burstiness)
	}
	if f.maxConcurrency > 0 && f.concurrency > 0 {
		return driver.Load{}, w, usageErr("--max-concurrency applies to open loop (--rate); closed loop is already capped by --concurrency")
	}
	if f.requests == 0 && f.duration == 0 && (pending == nil || pending.TraceRate() == 0) {
		f.requests = 100
	}
	load := driver.Load{
		Concurrency: f.concurrency, Rate: f.rate, Burstiness: f.burstiness, MaxConcurrency: f.maxConcurrency,
		Requests: f.requests, Duration: f.duration, Warmup: f.warmup, Seed: f.seed, DrainTimeout: f.drain,
	}
	if f.prefixTokens < 0 || f.prefixTokens > 10_000_000 || f.prefixPool < 1 || f.prefixPool > 1_000_000 {
		return load, w, usageErr("--prefix-tokens must be in 0..10000000 and --prefix-pool in 1..1000000")
	}
	if f.prefixTokens > 0 && f.inputTokens == 0 {
		return load, w, usageErr("--prefix-tokens shares a prefix among synthetic prompts: give --input-tokens too (the tokens of each request's own)")
	}
	if c.Flags().Changed("prefix-pool") && f.prefixTokens == 0 {
		return load, w, usageErr("--prefix-pool needs --prefix-tokens")
	}
	switch {
	case pending != nil:
		if pending.TraceRate() > 0 {
			// The schedule comes from the sized lines, level by level.
			load.Trace = []time.Duration{}
		}
		w.Dataset = pending
	case f.inputTokens > 0:
		syn := workload.Synthetic{Tokens: f.inputTokens, MaxTokens: f.maxTokens, Seed: f.seed}
		if err := f.lengths.apply(&syn); err != nil {
			return load, w, err
		}
		if f.prefixTokens > 0 {
			syn.Prefix = workload.Pool{Tokens: f.prefixTokens, Count: f.prefixPool}
		}
		w.Source, w.WantTokens = syn, f.inputTokens+f.prefixTokens
	default:
		if strings.TrimSpace(f.prompt) == "" {
			return load, w, usageErr("--prompt must not be empty")
		}
		w.Source = workload.FixedPrompt{Text: f.prompt, MaxTokens: f.maxTokens}
	}
	return load, w, nil
}

// longestRequest is the longest request a workload's flags ask for, in
// tokens, and what it is, or 0 when the flags do not say (a fixed prompt,
// a dataset).
func longestRequest(lf *loadFlags, vf *voiceFlags, voice bool) (int, string) {
	switch {
	case voice:
		n := vf.systemTokens + vf.turns*(vf.userTokens+vf.outputTokens)
		return n, fmt.Sprintf("a call's last turn (--system-prompt-tokens %d + --turns %d × (--user-tokens %d + --output-tokens %d))",
			vf.systemTokens, vf.turns, vf.userTokens, vf.outputTokens)
	case lf.inputTokens > 0 && lf.dataset == "":
		return lf.prefixTokens + lf.inputTokens + lf.maxTokens, fmt.Sprintf("a request (--prefix-tokens %d + --input-tokens %d + --max-tokens %d)",
			lf.prefixTokens, lf.inputTokens, lf.maxTokens)
	}
	return 0, ""
}
