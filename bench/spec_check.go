package bench

import (
	"errors"
	"fmt"
	"math"
)

// check reports the load flags that are out of range. A zero given on
// purpose is an error, not a request for the default: --rate 0 used to
// run a closed loop of one.
func (sp *Spec) check() error {
	if math.IsNaN(sp.Rate) || math.IsInf(sp.Rate, 0) || math.IsNaN(sp.Burstiness) || math.IsInf(sp.Burstiness, 0) {
		return errors.New("--rate and --burstiness must be finite numbers")
	}
	for _, f := range []struct {
		name     string
		negative bool
	}{{"concurrency", sp.Concurrency < 0}, {"rate", sp.Rate < 0}, {"max-concurrency", sp.MaxConcurrency < 0},
		{"requests", sp.Requests < 0}, {"duration", sp.Duration < 0}, {"input-tokens", sp.InputTokens < 0},
		{"max-tokens", sp.MaxTokens < 0}, {"warmup", sp.Warmup < -1}, {"drain-timeout", sp.Drain < 0}} {
		if f.negative {
			return fmt.Errorf("--%s must not be negative", f.name)
		}
	}
	for _, f := range []struct {
		name string
		zero bool
	}{{"rate", sp.Rate == 0}, {"concurrency", sp.Concurrency == 0}, {"requests", sp.Requests == 0},
		// A window of 0 with --requests counts requests instead (a sweep's
		// levels say so).
		{"duration", sp.Duration == 0 && sp.Requests == 0}, {"input-tokens", sp.InputTokens == 0}} {
		if f.zero && sp.given(f.name) {
			return fmt.Errorf("--%s 0 measures nothing; give a positive value (or leave the flag out)", f.name)
		}
	}
	if sp.Rate > maxRateBound || sp.Concurrency > maxCountBound || sp.MaxConcurrency > maxCountBound || sp.Requests > maxCountBound {
		return errors.New("--rate, --concurrency, --max-concurrency or --requests is absurdly large")
	}
	if err := sp.checkRanges(); err != nil {
		return err
	}
	if sp.MaxTokens < 1 {
		return errors.New("--max-tokens must be at least 1: a request without max_tokens runs on to the end of the model's context")
	}
	if sp.InputTokens > maxTokensBound || sp.MaxTokens > maxTokensBound {
		return fmt.Errorf("--input-tokens and --max-tokens must be at most %d", maxTokensBound)
	}
	return nil
}
