package transport

import (
	"context"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// Probe sends one request, as a prober of the server's token counts. It retries as the run's requests do
// (--retries): a probe that meets a transient error (a pod's first
// connection refused, a 429 while the server warms) would otherwise end
// the run before its first measured request.
// Its waits between attempts end after probeRetryBudget, whatever a
// Retry-After asks, so that a probe never holds a run (or its Ctrl-C)
// for long.
func (c *Client) Probe(r *workload.Request, rec *record.Record) {
	ctx, cancel := context.WithTimeout(context.Background(), probeRetryBudget)
	defer cancel()
	c.DoRetry(ctx, r, rec, false)
}

// probeRetryBudget bounds the waits of a probe's retries.
const probeRetryBudget = 10 * time.Second
