package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/live"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload/kind"
	"github.com/spf13/cobra"
)

// targetFlags declare the flags that say which endpoint to drive, over
// the spec they fill.
type targetFlags struct{ bench.TargetSpec }

func (f *targetFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.BaseURL, "base-url", os.Getenv("OPENAI_BASE_URL"), "API root of the target, e.g. http://host:8000/v1 (default $OPENAI_BASE_URL)")
	fs.StringVar(&f.Model, "model", "", "model name (default: the first id from GET /v1/models)")
	fs.StringVar(&f.APIKey, "api-key", os.Getenv("OPENAI_API_KEY"), "API key sent as a Bearer token (default $OPENAI_API_KEY; never printed or written)")
	fs.StringVar((*string)(&f.Endpoint), "endpoint", string(kind.Default), "the API requests go to: "+kind.Help())
	fs.StringVar(&f.Tools, "tools", "", "offer tools with every request: builtin (four everyday functions) or a JSON file of tool schemas (OpenAI's or BFCL's function list)")
	markInputs(c, "tools")
	fs.StringVar(&f.ToolChoice, "tool-choice", "", "tool_choice sent with the tools: auto, required, none or a tool's name (default: the server's, auto)")
	fs.IntVar(&f.ToolRounds, "tool-rounds", 1, "multi-turn calls: how many times in one turn a tool call is answered with --tool-result for the model to go on (model, tool, model; 0: a call ends its turn)")
	fs.StringVar(&f.ToolResult, "tool-result", `{"status": "ok", "result": "42"}`, "multi-turn calls: the canned output every tool call gets back, as a tool message (or a function_call_output item)")
	fs.StringVar(&f.History, "history", "full", "multi-turn calls: full sends the whole conversation every turn; server (--endpoint responses) names the answer before as previous_response_id and sends only the turn's new messages, the server holding the history (vLLM: VLLM_ENABLE_RESPONSES_API_STORE=1)")
	fs.StringArrayVar(&f.Headers, "header", nil, "extra request header K:V (repeatable)")
	fs.StringVar(&f.ExtraBody, "extra-body", "", `JSON object merged into every request body, e.g. '{"ignore_eos": true}'`)
	fs.StringVar(&f.ReasoningEffort, "reasoning-effort", "", "a reasoning model's thinking budget, low, medium or high (sent as reasoning_effort: gpt-oss and OpenAI's API)")
	fs.StringArrayVar(&f.TemplateKwargs, "chat-template-kwarg", nil, "KEY=VALUE sent in chat_template_kwargs (repeatable; VALUE as JSON where it is one), e.g. enable_thinking=false for Qwen3")
	fs.BoolVar(&f.IgnoreEOS, "ignore-eos", false, "ask for every request's max_tokens, whatever the model's end-of-sequence token says (ignore_eos, which vLLM, SGLang, llama.cpp and knee sim take; not OpenAI's API); on by default against the built-in target")
	fs.DurationVar(&f.Timeout, "timeout", 60*time.Second, "time allowed before the first byte of a response and then between content chunks; SSE comments do not reset it (0: none)")
	fs.DurationVar(&f.RequestTimeout, "request-timeout", 10*time.Minute, "total time allowed for one request, send to end of stream (0: none)")
	fs.DurationVar(&f.IdleConnTimeout, "idle-conn-timeout", transport.DefaultIdleConnTimeout, "how long an idle connection is kept for reuse (below uvicorn's 5 s keep-alive)")
	fs.IntVar(&f.Retries, "retries", 0, "retry 429, 503 and connection errors this many times (exponential backoff honouring Retry-After); first-attempt outcomes are reported too")
}

// serverHistory makes a conversation replay carry the server's own
// answers when the server holds the history (--history server): those
// are what it continues, whatever the file recorded.
func (f *loadFlags) serverHistory(t bench.TargetSpec) {
	if t.History == "server" {
		f.Data.LiveHistory = true
	}
}

// validate checks the target flags as a usage error. A dataset's
// requests may bring their own tools (BFCL), which a --tool-choice then
// goes with.
func (f *targetFlags) validate(c *cobra.Command) error {
	if d := c.Flags().Lookup("dataset"); d != nil && d.Value.String() != "" {
		f.ToolsPerRequest = true
	}
	if err := usage(f.Validate()); err != nil {
		return err
	}
	// (An input too large, or a wait a signal ended, keeps its own exit
	// code: Execute reads the cause.)
	return usage(f.ReadTools(c.Context()))
}

// config records the target in a result's configuration.
func (f *targetFlags) config(baseURL, model string) results.Config {
	var c results.Config
	bench.RecordTarget(&c, f.TargetSpec, baseURL, model, false)
	return c
}

// resolved is a target ready to be driven, and how to stop the built-in
// simulator when knee started it.
type resolved struct {
	*live.Resolved
	builtin bool
	stop    func()
}

// resolve finds the model when none was given. With no base URL at all it
// starts the built-in simulator and drives that.
func (f *targetFlags) resolve(ctx context.Context, c *cobra.Command, sim *simFlags) (*resolved, error) {
	if err := f.validate(c); err != nil {
		return nil, err
	}
	for _, w := range f.Warnings() {
		fmt.Fprintf(c.ErrOrStderr(), "knee: warning: %s\n", w)
	}
	r := &resolved{stop: func() {}}
	base := f.BaseURL
	if base == "" {
		// The built-in target's answers run to max_tokens unless told.
		if !c.Flags().Changed("ignore-eos") {
			f.IgnoreEOS = true
		}
		s, err := startBuiltinSim(ctx, c, sim)
		if err != nil {
			return nil, withCode(ExitRuntime, err)
		}
		base, r.builtin, r.stop = s.BaseURL, true, s.Stop
	}
	t := live.TargetOf(f.TargetSpec, base, "knee/"+version())
	t.Network = transport.DialFrom(ctx)
	res, err := live.Resolve(ctx, t)
	if err != nil {
		r.stop()
		if errors.Is(err, transport.ErrRedirect) || errors.Is(err, live.ErrNotServed) {
			return nil, usageErr("%w", err)
		}
		return nil, withCode(ExitRuntime, err)
	}
	if res.Warning != "" {
		fmt.Fprintf(c.ErrOrStderr(), "knee: %s\n", res.Warning)
	}
	r.Resolved = res
	return r, nil
}

// where says where the target is, its credentials redacted.
func (r *resolved) where() string {
	if r.builtin {
		return "the built-in simulator (" + results.RedactURL(r.Target.BaseURL) + ")"
	}
	return results.RedactURL(r.Target.BaseURL)
}

// loadFlags declare a command's load and workload flags over the spec
// they fill (bench.Spec: what is sent and how much).
type loadFlags struct{ bench.Spec }

func (f *loadFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.IntVar(&f.Concurrency, "concurrency", 0, "closed loop: this many streams, each sending its next request when its previous one ends (a conversation: its next conversation as its last turn ends)")
	fs.Float64Var(&f.Rate, "rate", 0, "open loop: arrivals per second (Poisson; see --burstiness)")
	fs.DurationVar(&f.Duration, "duration", 0, "length of the measured window")
	f.registerShared(c)
	c.MarkFlagsMutuallyExclusive("rate", "concurrency")
}

// registerShared adds the flags that run and sweep share.
func (f *loadFlags) registerShared(c *cobra.Command) {
	f.Given = c.Flags().Changed
	fs := c.Flags()
	fs.Float64Var(&f.Burstiness, "burstiness", 1, "gamma shape of open-loop gaps: 1 is Poisson, below 1 burstier, above 1 more regular")
	fs.IntVar(&f.MaxConcurrency, "max-concurrency", 0, "open loop: cap on requests in flight; arrivals wait for a slot, and the wait is measured")
	if c.Name() != "plan" {
		fs.DurationVar(&f.RampUp, "ramp-up", 0, "open loop: raise each level's rate over this time before its window, unmeasured, so the window starts on a server already loaded (as vLLM's bench ramps)")
		fs.StringVar(&f.RampUpStrategy, "ramp-up-strategy", "linear", "the ramp's shape: linear, or exponential (a constant factor a second)")
		fs.Float64Var(&f.RampUpFrom, "ramp-up-from", 0, "the ramp's first rate, per second (default: 0 for linear, a sixteenth of the level's rate for exponential)")
		hideDefault(fs, "ramp-up-from")
	}
	switch windowKind(c) {
	case "run":
		fs.IntVar(&f.Requests, "requests", 0, "measured requests (default 100 when --duration is not given)")
	case "plan":
		fs.IntVar(&f.Requests, "requests", 0, "not used: a plan's predictions are bounded by --duration")
		_ = fs.MarkHidden("requests")
	default:
		fs.IntVar(&f.Requests, "requests", 0, "measured requests per level, instead of --duration")
	}
	fs.IntVar(&f.Warmup, "warmup", -1, "unmeasured warm-up requests (default: one per concurrent stream)")
	hideDefault(fs, "warmup")
	fs.Uint64Var(&f.Seed, "seed", 1, "seed for arrivals and prompts")
	fs.IntVar(&f.InputTokens, "input-tokens", 0, "synthetic prompts of about N tokens, different for every request")
	fs.StringVar(&f.Data.Path, "dataset", "", "prompts from a file: prompt JSONL, OpenAI chat JSONL or ShareGPT JSON (see --dataset-format), cycled")
	fs.StringVar(&f.Prompt, "prompt", "Write a short story about a lighthouse keeper.", "the prompt sent when neither --input-tokens nor --dataset is given")
	fs.IntVar(&f.MaxTokens, "max-tokens", 128, "max_tokens of every request (a dataset line may override it)")
	fs.IntVar(&f.BatchSize, "batch-size", 0, "--endpoint embeddings: inputs a request, that many prompts' texts as one input list (default one text)")
	fs.IntVar(&f.ImageCount, "image-count", 0, "synthetic images a request, sent as image_url content parts with base64 data URLs (a vision-language model)")
	fs.StringVar(&f.ImageSizes, "image-size", "512x512", "the images' size, WxH, or several comma-separated (each request's images take them in turn)")
	fs.StringVar(&f.ImageFormat, "image-format", "png", "the images' format: png or jpeg")
	fs.IntVar(&f.ImageQuality, "image-quality", 85, "--image-format jpeg: its quality, 1 to 100")
	fs.IntVar(&f.ImagePool, "image-pool", 0, "reuse this many distinct images across the run (an encoder- and prefix-cache test; default: every image differs)")
	if c.Name() != "predict" && c.Name() != "plan" {
		// Only a live target fetches images.
		fs.StringVar(&f.ImageURLBase, "image-url-base", "", "send images as URLs under this base, for the target to fetch, instead of inline data URLs (a dataset's paths relative to --image-dir; synthetic images need --image-serve)")
		fs.StringVar(&f.ImageServe, "image-serve", "", "serve the run's images from knee itself on this address (HOST:PORT), for the target to fetch (with --image-url-base when the target reaches knee by another name)")
	}
	fs.IntVar(&f.Documents, "documents", 0, "--endpoint rerank: documents a request, each a prompt's text, ranked against a query of another's first 32 words (default one)")
	fs.DurationVar(&f.Drain, "drain-timeout", time.Minute, "time allowed after the window for requests still running; those cut are counted as interrupted (0: wait for all)")
	fs.BoolVar(&f.NoCalibrate, "no-calibrate", false, "send --input-tokens as knee's own filler count instead of calibrating it against the server's prompt_tokens")
	registerDataset(c, &f.Data)
	fs.StringVar(&f.Mix, "mix", "", "a YAML file of request classes sent in one load: each its share of the arrivals, prompt sizes, model (a LoRA adapter), priority, extra body, headers and SLO; results per class beside the whole (see docs/mix.md)")
	markInputs(c, "mix")
	fs.Float64Var(&f.InputStddev, "input-tokens-stddev", 0, "synthetic prompts: standard deviation of the input length (normal, seeded, clipped at 1)")
	fs.Float64Var(&f.OutputStddev, "max-tokens-stddev", 0, "synthetic prompts: standard deviation of max_tokens (normal, seeded, clipped at 1)")
	fs.Float64Var(&f.RangeRatio, "range-ratio", 0, "synthetic prompts: lengths uniform in [N(1−R), N(1+R)] for input and output, as vLLM's random dataset (0 ≤ R < 1)")
	fs.IntVar(&f.PrefixTokens, "prefix-tokens", 0, "synthetic prompts: open every prompt with a shared prefix of N tokens (before --input-tokens of its own), as GuideLLM's prefix buckets")
	fs.IntVar(&f.PrefixPool, "prefix-pool", 1, "with --prefix-tokens: how many different prefixes requests draw from")
	fs.DurationVar(&f.Slice, "slice", 10*time.Second, "cut each level's window into time slices this wide, each with its own counts and percentiles (0: none): a level whose latency rises through its window says so")
	fs.StringVar(&f.Goodput, "goodput", "", "count the requests meeting every bound, as vLLM's goodput, e.g. ttft:300,tpot:50,e2e:4000 (ms; also ttft_sched, e2e_sched, and ttfat for the first answer token of a model that reasons)")
	c.MarkFlagsMutuallyExclusive("input-tokens", "dataset")
	markInputs(c, "dataset")
}

// registerWorkload declares --workload and the voice workload's flags.
func (f *loadFlags) registerWorkload(c *cobra.Command, what string) {
	c.Flags().StringVar(&f.Workload, "workload", "requests", what)
	registerVoice(c, &f.Voice, 4, "5s,7s")
}

// prepare checks the spec and prepares its series for the target's
// endpoint, its errors usage errors.
func (f *loadFlags) prepare(c *cobra.Command, endpoint transport.Endpoint) (*bench.Prepared, error) {
	f.Endpoint = endpoint
	// A prediction reads an image's size and identity, never its pixels.
	f.VirtualImages = c.Name() == "predict" || c.Name() == "plan"
	p, err := f.Series(c.Context(), bench.Nonce(c.Context()))
	if err != nil {
		return nil, usageErr("%w", err)
	}
	return p, nil
}

// Flags that name files are marked, so that a test holds every one to
// the bounded reader (results/input) or the checked writer, and a new one
// cannot slip by unmarked.
const (
	inputMark  = "knee_input"
	outputMark = "knee_output"
)

// markInputs marks flags that name files knee reads.
func markInputs(c *cobra.Command, names ...string) { mark(c, inputMark, names) }

// markOutputs marks flags that name files knee writes.
func markOutputs(c *cobra.Command, names ...string) { mark(c, outputMark, names) }

func mark(c *cobra.Command, key string, names []string) {
	for _, n := range names {
		if err := c.Flags().SetAnnotation(n, key, []string{"true"}); err != nil {
			panic(err) // a mark on a flag the command lacks is a bug here
		}
	}
}

// sinkTarget is the resolved target as the sinks read it.
func (f *targetFlags) sinkTarget(ctx context.Context, tgt *resolved) sinkTarget {
	return sinkTarget{ctx: ctx, kind: f.Endpoint, model: tgt.Target.Model, baseURL: tgt.Target.BaseURL}
}
