package predict

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
)

// Bounds on one predicted level, checked before any runs. A level's
// requests are kept in memory as they finish, so how many fit is a
// question of memory (RequestBytes, MemoryBudget), asked in Check; these
// bound what no memory makes sensible.
const (
	MaxReplicas = 1024
	MaxStreams  = 100_000
	MaxWindow   = 24 * time.Hour
)

// defaultRequestTokens is the size assumed for a request whose size is not
// known before it runs (a dataset not yet sized).
const defaultRequestTokens = 512

// LevelsSpec is what a prediction's levels ask for, to be checked
// against the memory they need before any is run.
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
	// Tokens is a request's mean size, prompt and answer (0: 512).
	Tokens float64
	// Parallel is how many levels run at once (0: one).
	Parallel int
	// Budget is the memory predictions may take (0: MemoryBudget()).
	Budget int64
	// WindowFlag names the flag that sets Window ("--duration").
	WindowFlag string
}

// RequestsThatFit is how many simulated requests of tokens tokens each
// of parallel levels running at once may hold within budget bytes.
func RequestsThatFit(tokens float64, parallel int, budget int64) float64 {
	return float64(budget) / float64(max(parallel, 1)) / RequestBytes(tokens)
}

// Check refuses levels that cannot fit in memory, saying what would.
func (l LevelsSpec) Check() error {
	flag := cmp.Or(l.WindowFlag, "--duration")
	if l.Replicas > MaxReplicas {
		return fmt.Errorf("--replicas %d: at most %d replicas are predicted", l.Replicas, MaxReplicas)
	}
	if l.Window > MaxWindow {
		return fmt.Errorf("%s %s: at most %s of virtual time a level", flag, l.Window, MaxWindow)
	}
	budget, source := l.Budget, "the budget given"
	if budget == 0 {
		budget, source = health.MemoryBudget()
	}
	tokens := cmp.Or(l.Tokens, defaultRequestTokens)
	if l.Turns > 0 {
		// A call's turns each carry its history: a turn is about half
		// the last one.
		tokens /= 2
	}
	// No more levels run at once than there are.
	at := l.Parallel
	if len(l.Loads) > 0 {
		at = min(at, len(l.Loads))
	}
	fit := RequestsThatFit(tokens, at, budget)
	parallel := ""
	if at > 1 {
		parallel = fmt.Sprintf(", %d levels at once (--parallel)", at)
	}
	room := fmt.Sprintf("%s of memory for predictions (%s)%s holds about %s requests of %.0f tokens a level",
		Bytes(float64(budget)), source, parallel, results.Thousands(int(fit)), tokens)
	for _, load := range l.Loads {
		if l.Axis == "concurrency" {
			if load > MaxStreams {
				return fmt.Errorf("--concurrency %g: at most %d streams are predicted", load, MaxStreams)
			}
			if load > fit {
				return fmt.Errorf("--concurrency %g: %s, fewer than its streams hold at once; lower --concurrency or --parallel", load, room)
			}
		}
		n := float64(l.Requests)
		if n == 0 && l.Axis == "rate" {
			n = load * l.Window.Seconds()
		}
		if l.Turns > 0 {
			n *= float64(l.Turns)
		}
		if n > fit {
			fix := fmt.Sprintf("shorten %s to %s or less", flag, fitWindow(l.Window, fit/n))
			if l.Requests > 0 {
				fix = fmt.Sprintf("give --requests %d or fewer", int(float64(l.Requests)*fit/n))
			}
			if at > 1 {
				fix += ", or lower --parallel"
			}
			return fmt.Errorf("a level of %g would predict about %s requests: %s; %s", load, results.Thousands(int(n)), room, fix)
		}
	}
	return nil
}

// fitWindow is window scaled by share, rounded down to a second.
func fitWindow(window time.Duration, share float64) time.Duration {
	return max(time.Duration(float64(window)*share).Truncate(time.Second), time.Second)
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
			results.Thousands(blocks), size, results.Thousands(blocks*size), results.Thousands(n), seq, r.Tokens.Input.Mean, r.Tokens.Output.Mean)
	}
	return ""
}

// StartLimit is the longest max_model_len vLLM starts the target's model
// with, when under its context (model.ModelsFile.StartLimit); 0 when it
// starts at the whole context, or the model is not found.
func (t Target) StartLimit() int {
	n, _ := t.startLimit()
	return n
}

// startLimit is StartLimit and the context the model serves.
func (t Target) startLimit() (limit, context int) {
	m, err := t.model()
	if err != nil {
		return 0, 0
	}
	return t.Models.StartLimit(m), m.ContextLength
}

// StartNote says StartLimit in a sentence; empty when vLLM starts the
// model at its whole context.
func StartNote(t Target) string {
	n, context := t.startLimit()
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("vLLM starts this model on these GPUs only with --max-model-len %s or less: its KV cache holds no longer request, and at the model's %s-token context it refuses to start",
		results.Thousands(n), results.Thousands(context))
}

// stopped says why a search stopped: interrupted, or out of memory.
func stopped(err error) string {
	if errors.Is(err, ErrOutOfMemory) {
		return results.WhyStopped + ": " + err.Error()
	}
	return results.WhyStopped
}

// MaxPlanLoad is the most load a plan's search probes: what the memory
// budget predicts in one window (requests of tokens tokens, parallel
// searches at once), and never past 100,000.
func MaxPlanLoad(axis string, window time.Duration, tokens float64, parallel int, budget int64) float64 {
	fit := RequestsThatFit(cmp.Or(tokens, defaultRequestTokens), parallel, budget)
	if axis == "rate" {
		fit /= max(window.Seconds(), 1)
	}
	return math.Min(fit, maxPlanLoad)
}
