package cmd

import (
	"os"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/spf13/cobra"
)

// shardFlags split one load across processes.
type shardFlags struct {
	shard    string
	shards   int
	startAt  string
	interval time.Duration
}

func (f *shardFlags) register(c *cobra.Command, sweep bool) {
	fs := c.Flags()
	fs.StringVar(&f.shard, "shard", "", "send only part I of N of the load (I/N, from 0): arrival, worker or call k when k mod N = I; knee merge joins the parts")
	fs.IntVar(&f.shards, "shards", 0, "like --shard, with I from $JOB_COMPLETION_INDEX (as a Kubernetes Indexed Job sets it)")
	fs.StringVar(&f.startAt, "start-at", "", "start the measured window at this instant (RFC 3339 or Unix seconds), so that every shard starts the schedule together")
	if sweep {
		fs.DurationVar(&f.interval, "level-interval", 0, "with --start-at: level i starts at start-at + i × this (default: step duration + drain timeout + 15s)")
	}
	c.MarkFlagsMutuallyExclusive("shard", "shards")
}

// parse returns the shard and the start instant (zero when not given).
func (f *shardFlags) parse() (driver.Shard, time.Time, error) {
	s, err := driver.ParseShard(f.shard, f.shards, os.Getenv("JOB_COMPLETION_INDEX"))
	if err != nil {
		return s, time.Time{}, usageErr("%w", err)
	}
	if f.startAt == "" {
		if f.interval != 0 {
			return s, time.Time{}, usageErr("--level-interval needs --start-at")
		}
		return s, time.Time{}, nil
	}
	at, err := driver.ParseInstant(f.startAt)
	if err != nil {
		return s, time.Time{}, usageErr("--start-at %q: %w", f.startAt, err)
	}
	if f.interval < 0 {
		return s, time.Time{}, usageErr("--level-interval must not be negative")
	}
	return s, at, nil
}
