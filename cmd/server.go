package cmd

import (
	"context"

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

// serverView wraps a serverview.View; a nil view does nothing.
type serverView struct{ v *serverview.View }

// attach detects the server's account and hooks it to the window.
func (f *serverFlags) attach(_ context.Context, tgt *resolved, onStart, onEnd *func(context.Context)) serverView {
	if f.none {
		return serverView{}
	}
	v := serverview.New(tgt.target, f.url)
	*onStart, *onEnd = v.Start, v.End
	return serverView{v}
}

func (s serverView) finish(res *results.Run) {
	if s.v != nil {
		s.v.Fill(res)
	}
}
