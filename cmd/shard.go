package cmd

import (
	"fmt"
	"os"
	"strconv"
	"strings"
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
	var s driver.Shard
	switch {
	case f.shard != "":
		i, n, ok := strings.Cut(f.shard, "/")
		idx, err1 := strconv.Atoi(i)
		cnt, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil || cnt < 1 || idx < 0 || idx >= cnt {
			return s, time.Time{}, usageErr("--shard %q: want I/N with 0 ≤ I < N, e.g. 2/4", f.shard)
		}
		s = driver.Shard{Index: idx, Count: cnt}
	case f.shards != 0:
		env := os.Getenv("JOB_COMPLETION_INDEX")
		idx, err := strconv.Atoi(env)
		if f.shards < 1 || err != nil || idx < 0 || idx >= f.shards {
			return s, time.Time{}, usageErr("--shards %d takes the shard from $JOB_COMPLETION_INDEX, which is %q: want 0 ≤ I < %d", f.shards, env, f.shards)
		}
		s = driver.Shard{Index: idx, Count: f.shards}
	}
	if f.startAt == "" {
		if f.interval != 0 {
			return s, time.Time{}, usageErr("--level-interval needs --start-at")
		}
		return s, time.Time{}, nil
	}
	at, err := parseInstant(f.startAt)
	if err != nil {
		return s, time.Time{}, usageErr("--start-at %q: %v", f.startAt, err)
	}
	if f.interval < 0 {
		return s, time.Time{}, usageErr("--level-interval must not be negative")
	}
	return s, at, nil
}

// parseInstant reads RFC 3339 or Unix seconds (fractions allowed).
func parseInstant(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		if t.Year() < 2000 || t.Year() > 2200 {
			return time.Time{}, fmt.Errorf("the year %d is not between 2000 and 2200", t.Year())
		}
		return t, nil
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || !(secs >= 946684800 && secs <= 7258118400) {
		return time.Time{}, fmt.Errorf("not an RFC 3339 time or Unix seconds between 2000 and 2200")
	}
	whole := int64(secs)
	return time.Unix(whole, int64((secs-float64(whole))*1e9)), nil
}
