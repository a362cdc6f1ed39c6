package cmd

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/gpumetrics"
	"github.com/kneebench/knee/bench/live"
	"github.com/kneebench/knee/bench/serverview"

	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// serverFlags control the server-side view of the measured window.
type serverFlags struct {
	none bool
	url  string
	// resetCache is --reset-cache; profile is --profile.
	resetCache, profile bool
	// gpuURLs is --gpu-metrics-url.
	gpuURLs []string
	// pools, when --server-metrics-url names roles, watches each pool of a
	// disaggregated deployment (openPools).
	pools *serverview.Pools
	// reset and profiler are --reset-cache's and --profile's, kept across
	// levels (each remembers what the server offers).
	reset    *live.CacheReset
	profiler *live.Profiler
}

func (f *serverFlags) register(c *cobra.Command) {
	c.Flags().BoolVar(&f.none, "no-server-metrics", false, "do not read the server's own metrics")
	c.Flags().StringVar(&f.url, "server-metrics-url", "", "Prometheus metrics URL of the server (default: derived from --base-url); "+
		"for a disaggregated deployment each pool's, prefill=URL,decode=URL: each pool's figures and TTFT by phase")
	c.Flags().Var((*httpURLs)(&f.gpuURLs), "gpu-metrics-url", "scrape a GPU exporter's Prometheus endpoint, NVIDIA's DCGM exporter or AMD's device metrics exporter (e.g. http://node:9400/metrics; repeat it for each node) over each measured window: power, energy, utilisation and memory per GPU, and joules per output token, per request and per 1k prompt tokens")
	c.Flags().BoolVar(&f.profile, "profile", false, "run the server's profiler over each level's measured window only (POST /start_profile, then /stop_profile once it drained: vLLM with VLLM_TORCH_PROFILER_DIR set, SGLang, knee sim --profile-dir)")
	c.Flags().BoolVar(&f.resetCache, "reset-cache", false, "drop the server's prefix cache before each level, so each starts cold without a restart (vLLM's POST /reset_prefix_cache, which needs VLLM_SERVER_DEV_MODE=1; SGLang's POST /flush_cache; knee sim's own)")
}

// checkReset makes the first reset before any request is sent, so a
// server that offers none is refused at once rather than level after
// level.
func (f *serverFlags) checkReset(ctx context.Context, lr *live.Live) error {
	if err := f.openPools(lr.Target); err != nil {
		return err
	}
	if f.reset == nil {
		return nil
	}
	if _, err := f.reset.Reset(ctx); err != nil {
		if ctx.Err() != nil {
			// A signal ended the wait on a hung server: interrupted (130),
			// not a failure to run (3).
			return withCode(ExitRuntime, fmt.Errorf("--reset-cache: %w", results.ErrInterrupted))
		}
		return withCode(ExitRuntime, fmt.Errorf("--reset-cache: %w", err))
	}
	return nil
}

// watch makes each level's watchers, in the order their hooks run: the
// prefix-cache reset before the level (--reset-cache), the server's own
// account unless --no-server-metrics, the GPUs' (--gpu-metrics-url), and
// the server's profiler (--profile), started after the view's reset and
// stopped before it is read.
func (f *serverFlags) watch(tgt *resolved) func() bench.Watcher {
	if f.none && len(f.gpuURLs) == 0 && f.reset == nil && f.profiler == nil {
		return nil
	}
	return func() bench.Watcher {
		var ws bench.Watchers
		if f.reset != nil {
			ws = append(ws, f.reset.Watcher())
		}
		switch {
		case f.none:
		case f.pools != nil:
			ws = append(ws, f.pools)
		default:
			ws = append(ws, serverview.Detect(tgt.Target, f.url))
		}
		if len(f.gpuURLs) > 0 {
			ws = append(ws, gpumetrics.New(f.gpuURLs, gpumetrics.DefaultInterval))
		}
		if f.profiler != nil {
			ws = append(ws, f.profiler.Watcher())
		}
		if len(ws) == 1 {
			return ws[0]
		}
		return ws
	}
}

// runner is the live runner of the resolved target: every level's result
// carries the target's environment, and its watchers (watch); detail asks
// progress for what a live view shows.
func (f *targetFlags) runner(tgt *resolved, server *serverFlags, detail bool) *live.Live {
	if server.resetCache {
		server.reset = live.NewCacheReset(tgt.Target)
	}
	if server.profile {
		server.profiler = live.NewProfiler(tgt.Target)
	}
	return &live.Live{Target: tgt.Target, Watch: server.watch(tgt), LiveDetail: detail, Environment: environment()}
}

// levelConfig is the target's part of every level's configuration.
func (f *targetFlags) levelConfig(tgt *resolved) results.Config {
	cfg := f.config(tgt.Target.BaseURL, tgt.Target.Model)
	cfg.BuiltinSim = tgt.builtin
	return cfg
}

// httpURLs is a repeatable flag of http(s) URLs, checked as each is given:
// a file:// or schemeless value is refused before anything runs.
type httpURLs []string

func (u *httpURLs) String() string { return strings.Join(*u, ",") }
func (u *httpURLs) Type() string   { return "stringArray" }

func (u *httpURLs) Set(v string) error {
	p, err := url.Parse(v)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL of an exporter (e.g. http://node:9400/metrics)", v)
	}
	*u = append(*u, v)
	return nil
}
