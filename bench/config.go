package bench

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// This file is the one mapping between a load as knee runs it and its
// record in a result's results.Config, both ways: RecordLoad and
// RecordVoice write it when a run is made, ReplayLoad and ReplayVoice
// read it back when knee calibrate replays the run. A field added to one
// side and not the other fails TestConfigRoundTrip.

// ErrNoMode is returned by ReplayLoad for a result whose mode is neither
// open nor closed.
var ErrNoMode = errors.New("the result records no load mode it knows")

// RecordLoad writes a request load's mode, rate or concurrency, window,
// warm-up and seed into c. Its trace, if any, is the dataset's; the
// caller records the speedup (TraceSpeedup).
func RecordLoad(c *results.Config, l driver.Load) {
	if l.Rate > 0 {
		c.Mode, c.Rate, c.Burstiness, c.MaxConcurrency = results.ModeOpen, l.Rate, l.Burstiness, l.MaxConcurrency
		c.Concurrency = 0
	} else {
		c.Mode, c.Concurrency = results.ModeClosed, l.Concurrency
		c.Rate, c.Burstiness, c.MaxConcurrency = 0, 0, 0
	}
	c.Requests, c.DurationS, c.Seed = l.Requests, l.Duration.Seconds(), l.Seed
	c.Warmup = l.DefaultWarmup()
}

// RecordRequests writes a level of requests into c: what it sends (a
// dataset or trace, synthetic prompts of the size and spread asked, a
// fixed prompt), the max_tokens asked, and its load (RecordLoad).
func RecordRequests(c *results.Config, w Workload, load driver.Load) {
	syn, synthetic := w.Source.(workload.Synthetic)
	switch {
	case w.Dataset != nil:
		c.Dataset = w.Dataset.Path
		c.Workload = results.WorkloadDataset
		if load.Trace != nil {
			c.Workload = results.WorkloadTrace
		}
	case synthetic:
		c.InputTokens = syn.Tokens
		c.PrefixTokens, c.PrefixPool = syn.Prefix.Tokens, 0
		if syn.Prefix.Tokens > 0 {
			c.PrefixPool = syn.Prefix.Count
		}
		c.Workload = results.WorkloadSynthetic
		c.InputStddev, c.OutputStddev, c.RangeRatio = syn.Spread.InputStddev, syn.Spread.OutputStddev, syn.Spread.RangeRatio
	default:
		c.Workload = results.WorkloadFixedPrompt
	}
	RecordLoad(c, load)
	c.MaxTokens = w.MaxTokens
}

// ReplaySynthetic reads back the synthetic prompts RecordRequests wrote:
// their size, spread, shared prefix, max_tokens and seed (the nonce is
// the replay's own).
func ReplaySynthetic(c results.Config, nonce string) workload.Synthetic {
	syn := workload.Synthetic{Tokens: c.InputTokens, MaxTokens: c.MaxTokens, Seed: c.Seed, Nonce: nonce,
		Spread: workload.Spread{InputStddev: c.InputStddev, OutputStddev: c.OutputStddev, RangeRatio: c.RangeRatio}}
	if c.PrefixTokens > 0 {
		syn.Prefix = workload.Pool{Tokens: c.PrefixTokens, Count: c.PrefixPool}
	}
	return syn
}

// ReplayLoad reads back the load RecordLoad wrote, with drain as its
// drain timeout (a result does not record the one used). A trace's load
// gets an empty Trace, to be filled with the dataset's schedule.
func ReplayLoad(c results.Config, drain time.Duration) (driver.Load, error) {
	l := driver.Load{Requests: c.Requests, Duration: seconds(c.DurationS), Warmup: c.Warmup, Seed: c.Seed, DrainTimeout: drain}
	switch c.Mode {
	case results.ModeOpen:
		l.Rate, l.Burstiness, l.MaxConcurrency = c.Rate, c.Burstiness, c.MaxConcurrency
		if l.Burstiness <= 0 {
			l.Burstiness = 1 // results older than the burstiness field were Poisson
		}
	case results.ModeClosed:
		l.Concurrency = c.Concurrency
	default:
		return driver.Load{}, fmt.Errorf("%w: %q", ErrNoMode, c.Mode)
	}
	if c.TraceSpeedup > 0 {
		l.Trace = []time.Duration{}
	}
	return l, l.Validate()
}

// RecordVoice writes the voice workload's calls and their arrivals into
// c.
func RecordVoice(c *results.Config, v workload.Voice, l driver.CallLoad) {
	c.Workload, c.Mode, c.Rate, c.Seed = results.WorkloadVoice, results.ModeOpen, l.Rate, l.Seed
	c.DurationS, c.MaxTokens = l.Duration.Seconds(), v.OutputTokens
	c.Voice = &results.VoiceConfig{SystemPromptTokens: v.SystemPromptTokens, UserTokens: v.UserTokens, Turns: v.Turns,
		GapMinS: v.GapMin.Seconds(), GapMaxS: v.GapMax.Seconds(), OutputTokens: v.OutputTokens,
		MaxConcurrentCalls: l.MaxConcurrentCalls, Calls: l.Calls}
}

// ReplayVoice reads back what RecordVoice wrote: the calls' script (with
// nonce as its text's seed) and their arrivals, with drain as the drain
// timeout.
func ReplayVoice(c results.Config, nonce string, drain time.Duration) (workload.Voice, driver.CallLoad, error) {
	vc := c.Voice
	if vc == nil || c.Rate <= 0 {
		return workload.Voice{}, driver.CallLoad{}, errors.New("the call workload's settings are missing from the result")
	}
	v := workload.Voice{SystemPromptTokens: vc.SystemPromptTokens, UserTokens: vc.UserTokens, Turns: vc.Turns,
		GapMin: seconds(vc.GapMinS), GapMax: seconds(vc.GapMaxS), OutputTokens: vc.OutputTokens, Seed: c.Seed, Nonce: nonce}
	if err := v.Validate(); err != nil {
		return workload.Voice{}, driver.CallLoad{}, err
	}
	l := driver.CallLoad{Rate: c.Rate, Calls: vc.Calls, Duration: seconds(c.DurationS),
		MaxConcurrentCalls: vc.MaxConcurrentCalls, Seed: c.Seed, DrainTimeout: drain}
	return v, l, nil
}

// seconds is a recorded number of seconds as a duration, to the
// nanosecond.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }
