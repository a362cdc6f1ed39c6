package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// SweepSpec is a sweep's levels and window, as knee sweep's and knee
// predict's flags give them; errors name the flags.
type SweepSpec struct {
	// Rates and Concurrency are --rates and --concurrency (one of them,
	// or neither for Defaults); Speedups is --trace-speedups.
	Rates, Concurrency, Speedups string
	// Defaults are the levels when neither is given (a preset's rates, or
	// the default sweep's).
	Defaults []float64
	// Step is --duration; CallStep, when set, is the window of a
	// level of calls when it is not given.
	Step, CallStep time.Duration
}

// ParseLevels reads a list of levels, e.g. 1,2,4: positive, increasing.
func ParseLevels(s string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a positive number", part)
		}
		if len(out) > 0 && v <= out[len(out)-1] {
			return nil, fmt.Errorf("levels must increase (%g after %g)", v, out[len(out)-1])
		}
		out = append(out, v)
	}
	return out, nil
}

// Levels is the sweep's axis ("rate" or "concurrency") and loads for the
// workload sp names.
func (w SweepSpec) Levels(sp *Spec) (string, []float64, error) {
	for _, f := range []struct{ name, value string }{{"rates", w.Rates}, {"concurrency", w.Concurrency}, {"trace-speedups", w.Speedups}} {
		if sp.given(f.name) && strings.TrimSpace(f.value) == "" {
			return "", nil, fmt.Errorf("--%s is empty: give levels, e.g. 1,2,4", f.name)
		}
	}
	switch {
	case w.Rates != "":
		l, err := ParseLevels(w.Rates)
		if err != nil {
			return "", nil, fmt.Errorf("--rates: %w", err)
		}
		for _, v := range l {
			if err := outside("--rates level", v, MinRate, MaxRate, "per second"); err != nil {
				return "", nil, err
			}
		}
		return "rate", l, nil
	case w.Concurrency != "":
		l, err := ParseLevels(w.Concurrency)
		if err != nil {
			return "", nil, fmt.Errorf("--concurrency: %w", err)
		}
		for _, v := range l {
			if v != float64(int(v)) {
				return "", nil, fmt.Errorf("--concurrency: %g is not a whole number", v)
			}
			if err := outside("--concurrency level", v, 1, MaxStreams, "streams"); err != nil {
				return "", nil, err
			}
		}
		if sp.Workload != "requests" {
			return "", nil, fmt.Errorf("the %s workload is open loop: give --rates", sp.Workload)
		}
		return "concurrency", l, nil
	case len(w.Defaults) > 0:
		return "rate", w.Defaults, nil
	case sp.Workload == "voice":
		return "", nil, errors.New("a voice sweep needs --rates (calls per second) or --preset (see knee presets)")
	case sp.Workload == "conversations":
		return "", nil, errors.New("a conversations sweep needs --rates (conversations per second)")
	}
	return "", nil, errors.New("a sweep needs --rates or --concurrency")
}

// Prepare fills sp for the sweep's first level (its window the step's,
// unless a count bounds it), prepares the series and, for a trace, turns
// the levels into mean rates. It returns the prepared series and the
// levels.
func (w SweepSpec) Prepare(ctx context.Context, sp *Spec, axis string, loads []float64, nonce string) (*Prepared, []float64, error) {
	if w.Step < 0 {
		return nil, nil, errors.New("--duration must not be negative")
	}
	if err := outsideDuration("--duration", w.Step, MaxWindow); err != nil {
		return nil, nil, err
	}
	step := w.Step
	if sp.Workload != "requests" && !sp.given("duration") && w.CallStep > 0 {
		// A call lasts its turns and gaps (about 20 s by default): a
		// window of 15 s holds too few whole calls to read.
		step = w.CallStep
	}
	sp.Duration = step
	counted := sp.Requests > 0 || sp.Workload != "requests" && sp.Voice.Calls > 0
	if counted && !sp.given("duration") {
		sp.Duration = 0
	}
	if axis == "rate" {
		sp.Rate = loads[0]
	} else {
		sp.Concurrency = int(loads[0])
	}
	plan, err := sp.Series(ctx, nonce)
	if err != nil {
		return nil, nil, err
	}
	if pd := plan.SingleDataset(); pd != nil && pd.TraceRate() > 0 {
		if loads, err = w.traceLevels(axis, loads, pd.TraceRate()); err != nil {
			return nil, nil, err
		}
		if !sp.given("duration") {
			// A trace's level is the whole trace, unless bounded.
			sp.Duration, plan.Load.Duration = 0, 0
			plan.SetLoad(plan.Load)
		}
	} else if w.Speedups != "" {
		return nil, nil, errors.New("--trace-speedups applies to a trace (a --dataset whose lines carry timestamps)")
	}
	if m := plan.Series.Workload.Mix; m != nil && m.vary < 0 {
		if rates, sum := m.file.Rates(); rates {
			// The classes give their rates: the load is their sum, one
			// level, not the default levels.
			axis, loads = "rate", []float64{sum}
		}
	}
	plan.Series.Need = DatasetNeed(plan.Load, loads, axis == "rate")
	return plan, loads, nil
}

// traceLevels are a trace sweep's levels as mean rates: --rates as given,
// or --trace-speedups (default 0.5,1,2,4) times the trace's own rate.
func (w SweepSpec) traceLevels(axis string, loads []float64, rate float64) ([]float64, error) {
	if axis != "rate" {
		return nil, errors.New("a trace's timestamps are its arrivals: sweep it with --trace-speedups or --rates, not --concurrency")
	}
	if w.Rates != "" {
		if w.Speedups != "" {
			return nil, errors.New("give --rates or --trace-speedups, not both")
		}
		return loads, nil
	}
	list := w.Speedups
	if list == "" {
		list = "0.5,1,2,4"
	}
	sp, err := ParseLevels(list)
	if err != nil {
		return nil, fmt.Errorf("--trace-speedups: %w", err)
	}
	out := make([]float64, len(sp))
	for i, s := range sp {
		if err := outside("--trace-speedups level", s, MinSpeedup, MaxSpeedup, "times the trace's speed"); err != nil {
			return nil, err
		}
		out[i] = s * rate
	}
	return out, nil
}
