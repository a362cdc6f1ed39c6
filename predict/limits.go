package predict

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kneebench/knee/results"
)

// Bounds on one predicted level, checked before any runs: a level's
// requests are kept in memory as they finish (about 1.5 KB each), so a
// level far past these would end in running out of it.
const (
	MaxRequests = 500_000
	MaxReplicas = 1024
	MaxStreams  = 100_000
	MaxWindow   = 24 * time.Hour
)

// LevelsSpec is what a prediction's levels ask for, to be checked
// against the bounds before any is run.
type LevelsSpec struct {
	// Axis is "rate" or "concurrency", Loads the levels along it.
	Axis  string
	Loads []float64
	// Requests bounds each level by a count (0: by Window).
	Requests int
	Window   time.Duration
	// Turns is a call's turns, for a level of calls (0: requests).
	Turns    int
	Replicas int
}

// Check refuses levels that cannot fit in memory, naming the flag to
// change.
func (l LevelsSpec) Check() error {
	if l.Replicas > MaxReplicas {
		return fmt.Errorf("--replicas %d: at most %d replicas are predicted", l.Replicas, MaxReplicas)
	}
	if l.Window > MaxWindow {
		return fmt.Errorf("--step-duration %s: at most %s of virtual time a level", l.Window, MaxWindow)
	}
	for _, load := range l.Loads {
		if l.Axis == "concurrency" && load > MaxStreams {
			return fmt.Errorf("--concurrency %g: at most %d streams are predicted", load, MaxStreams)
		}
		n := float64(l.Requests)
		if n == 0 && l.Axis == "rate" {
			n = load * l.Window.Seconds()
		}
		if l.Turns > 0 {
			n *= float64(l.Turns)
		}
		if n > MaxRequests {
			return fmt.Errorf("a level of %g would predict about %.0f requests, past the %d a level holds in memory: shorten --step-duration, or give --requests",
				load, n, MaxRequests)
		}
	}
	return nil
}

// KVNote says how many sequences of the predicted workload's mean size
// (prompt and answer, as the first level counted them) the KV cache of
// one replica holds: where a knee sits when the cache, not compute, runs
// out. It records the cache in the sweep's prediction as well; it is
// empty when the sweep has no prediction or no level counted tokens.
func KVNote(t Target, sw *results.Sweep) string {
	blocks, size, err := t.KVCapacity()
	if err != nil || sw.Prediction == nil {
		return ""
	}
	sw.Prediction.KVBlocks, sw.Prediction.KVBlockTokens = blocks, size
	for _, l := range sw.Levels {
		r := l.Run
		if r == nil || r.Tokens.Input.Count == 0 {
			continue
		}
		seq := r.Tokens.Input.Mean + r.Tokens.Output.Mean
		n := SequencesHeld(blocks, size, seq)
		sw.Prediction.KVSequences, sw.Prediction.KVSequenceTokens = n, seq
		return fmt.Sprintf("KV cache (one replica): %s blocks of %d tokens (%s tokens) hold %s sequences of the workload's mean %.0f tokens (prompt %.0f + answer %.0f)",
			Thousands(blocks), size, Thousands(blocks*size), Thousands(n), seq, r.Tokens.Input.Mean, r.Tokens.Output.Mean)
	}
	return ""
}

// Thousands writes n with thousands separators.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
