package cmd

import (
	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/serverview"

	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// serverFlags control the server-side view of the measured window.
type serverFlags struct {
	none bool
	url  string
}

func (f *serverFlags) register(c *cobra.Command) {
	c.Flags().BoolVar(&f.none, "no-server-metrics", false, "do not read the server's own metrics")
	c.Flags().StringVar(&f.url, "server-metrics-url", "", "Prometheus metrics URL of the server (default: derived from --base-url)")
}

// watch makes the server's own account of each level's window, unless
// --no-server-metrics.
func (f *serverFlags) watch(tgt *resolved) func() bench.Watcher {
	if f.none {
		return nil
	}
	return func() bench.Watcher { return serverview.New(tgt.Target, f.url) }
}

// live is the live runner of the resolved target: every level's result
// carries the target's environment, and the server's view unless
// --no-server-metrics; detail asks progress for what a live view shows.
func (f *targetFlags) live(tgt *resolved, server *serverFlags, detail bool) *bench.Live {
	return &bench.Live{Target: tgt.Target, Watch: server.watch(tgt), LiveDetail: detail, Environment: environment()}
}

// levelConfig is the target's part of every level's configuration.
func (f *targetFlags) levelConfig(tgt *resolved) results.Config {
	cfg := f.config(tgt.Target.BaseURL, tgt.Target.Model)
	cfg.BuiltinSim = tgt.builtin
	return cfg
}
