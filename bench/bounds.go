package bench

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/kneebench/knee/health"
)

// The ranges of the load and scaling flags: what a run can mean. A value
// outside is refused before anything is sent, naming its range, rather
// than accepted to wait for years (--rate 1e-12, --trace-speedup 1e-9:
// a 1 s gap became 31 years) or to overflow a length.
const (
	// MinRate and MaxRate bound a rate of arrivals per second: one every
	// 17 minutes to a million a second.
	MinRate, MaxRate = 0.001, 1_000_000
	// MaxStreams bounds a closed loop's streams and an open loop's cap,
	// as knee predict's.
	MaxStreams = 100_000
	// MaxWindow bounds a measured window or a sweep's step: a week.
	MaxWindow = 7 * 24 * time.Hour
	// MaxWait bounds the timeouts and the drain: a day.
	MaxWait = 24 * time.Hour
	// MinSpeedup and MaxSpeedup bound a trace's replay speed.
	MinSpeedup, MaxSpeedup = 0.001, 1_000_000
	// MaxWarmup bounds the unmeasured warm-up requests.
	MaxWarmup = 1_000_000
)

// outside is the refusal of flag's value v outside [lo, hi].
func outside(flag string, v, lo, hi float64, unit string) error {
	if v >= lo && v <= hi {
		return nil
	}
	return fmt.Errorf("%s %s is outside %s to %s %s", flag, asTyped(v), asTyped(lo), asTyped(hi), unit)
}

// asTyped writes a bound or a value as a user types it: 100000000, not
// 1e+08; only a huge or tiny number keeps its exponent.
func asTyped(v float64) string {
	if a := math.Abs(v); a == 0 || a >= 1e-4 && a < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// outsideDuration is the refusal of a duration flag's value past max.
func outsideDuration(flag string, d, max time.Duration) error {
	if d <= max {
		return nil
	}
	return fmt.Errorf("%s %s is past the %s a run can mean", flag, d, max)
}

// checkRanges refuses a load or window outside what a run can mean.
func (sp *Spec) checkRanges() error {
	checks := []error{
		outside("--concurrency", float64(sp.Concurrency), 0, MaxStreams, "streams"),
		outside("--max-concurrency", float64(sp.MaxConcurrency), 0, MaxStreams, "requests in flight"),
		outside("--warmup", float64(sp.Warmup), -1, MaxWarmup, "requests"),
		outsideDuration("--duration", sp.Duration, MaxWindow),
		outsideDuration("--drain-timeout", sp.Drain, MaxWait),
	}
	if sp.Rate > 0 {
		checks = append(checks, outside("--rate", sp.Rate, MinRate, MaxRate, "per second"))
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// CheckHost refuses streams or a cap on requests in flight past what the
// host's memory holds (bound, InFlightBound for a live run).
func (sp *Spec) CheckHost(bound int64) error {
	for _, f := range []struct {
		flag string
		n    int
	}{{"--concurrency", sp.Concurrency}, {"--max-concurrency", sp.MaxConcurrency}} {
		if int64(f.n) > bound {
			budget, source := health.MemoryBudget()
			return fmt.Errorf("%s %d: this host holds about %d requests in flight (%d KiB each in %d MiB, %s): lower %s, or run shards (knee k8s job --shards)",
				f.flag, f.n, bound, InFlightBytes>>10, budget>>20, source, f.flag)
		}
	}
	return nil
}

// InFlightBytes is what a request in flight costs the client, as
// measured (CHANGELOG.md, "The client's memory"): its 16 KiB of
// header buffer, its line reader, connection and goroutine. 9,130
// requests held by a stalled server took 246 MB of RSS, 27 KB each.
const InFlightBytes = 32 << 10

// InFlightBound is the most requests in flight the host's memory holds
// (health.MemoryBudget over InFlightBytes), at least 1,000.
func InFlightBound() int64 {
	budget, _ := health.MemoryBudget()
	return max(budget/InFlightBytes, 1000)
}
