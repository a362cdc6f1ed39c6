package bench

import (
	"errors"
	"fmt"
	"math"
	"strings"
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
	c.RampUpS, c.RampUpStrategy, c.RampUpFrom = 0, "", 0
	if r := l.Ramp; r.Duration > 0 {
		c.RampUpS, c.RampUpStrategy, c.RampUpFrom = r.Duration.Seconds(), r.Strategy(), max(r.From, 0)
	}
	c.Requests, c.DurationS, c.Seed = l.Requests, l.Duration.Seconds(), l.Seed
	c.Warmup = l.DefaultWarmup()
}

// RecordRequests writes a level of requests into c: what it sends (a
// dataset or trace, synthetic prompts of the size and spread asked, a
// fixed prompt), the max_tokens asked, and its load (RecordLoad).
func RecordRequests(c *results.Config, w Workload, load driver.Load) {
	c.Batch = w.Batch
	if im := w.Images; im != nil {
		c.Images = im.String()
	} else if w.Dataset != nil && w.Dataset.images != nil {
		c.Images = w.Dataset.images.String()
	}
	syn, synthetic := w.Source.(workload.Synthetic)
	switch {
	case w.Mix != nil:
		c.Workload, c.Mix = results.WorkloadMix, w.Mix.String()
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
		if c.RampUpS > 0 {
			// A start rate of 0 is a line's default, and no exponential's.
			l.Ramp = workload.Ramp{Duration: seconds(c.RampUpS), Exponential: c.RampUpStrategy == "exponential", From: -1}
			if c.RampUpFrom > 0 {
				l.Ramp.From = c.RampUpFrom
			}
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

// RecordTarget writes the target into c, secrets redacted: its base URL
// (builtin says it is knee's own simulator), model, endpoint, extra body,
// headers, ignore_eos and timeout.
func RecordTarget(c *results.Config, t TargetSpec, baseURL, model string, builtin bool) {
	c.BaseURL, c.Model, c.Endpoint, c.BuiltinSim = results.RedactURL(baseURL), model, string(t.Endpoint), builtin
	c.ExtraBody, c.IgnoreEOS, c.TimeoutS = results.RedactJSON(t.BodyOrExtra()), t.IgnoreEOS, t.Timeout.Seconds()
	if t.History == "server" {
		c.History = t.History
	}
	c.Tools, c.ToolChoice = t.Tools, t.ToolChoice
	if t.Tools != "" || t.ToolsPerRequest {
		c.ToolRounds, c.ToolResult = t.ToolRounds, t.ToolResult
	}
	c.APIKey, c.Headers = "", nil
	if t.APIKey != "" {
		c.APIKey = results.Redacted
	}
	if len(t.Headers) > 0 {
		c.Headers = map[string]string{}
		for _, h := range t.Headers {
			k, v, _ := strings.Cut(h, ":")
			k = strings.TrimSpace(k)
			if results.Sensitive(k) {
				v = results.Redacted
			}
			c.Headers[k] = strings.TrimSpace(v)
		}
	}
}

// Describe fills a sweep's top-level configuration with what every level
// shares: workload, mode, token sizes, seed and warm-up.
func (s *Series) Describe(c *results.Config, axis string) {
	w := s.Workload
	switch {
	case w.Conversations:
		c.Workload, c.Mode, c.Seed, c.MaxTokens = results.WorkloadConversations, results.ModeOpen, s.Load.Seed, w.MaxTokens
		c.Dataset, c.DatasetFormat = w.Dataset.Path, string(w.Dataset.Format())
		c.DurationS = s.Load.Duration.Seconds()
		c.Conversations = &results.ConversationConfig{GapMinS: w.GapMin.Seconds(), GapMaxS: w.GapMax.Seconds(), LiveHistory: w.Dataset.LiveHistory,
			Calls: w.Calls, MaxConcurrentCalls: w.MaxConcurrentCalls}
		if s.Load.Concurrency > 0 || axis == "concurrency" {
			c.Mode = results.ModeClosed
		}
	case w.Voice != nil:
		RecordVoice(c, *w.Voice, driver.CallLoad{Calls: w.Calls, Duration: s.Load.Duration, MaxConcurrentCalls: w.MaxConcurrentCalls, Seed: s.Load.Seed})
		c.Workload, c.Mode, c.Seed = results.WorkloadVoice, results.ModeOpen, s.Load.Seed
		c.DurationS = s.Load.Duration.Seconds()
	default:
		load := s.Load
		if axis == "concurrency" && load.Concurrency == 0 {
			load.Concurrency = 1
		}
		RecordRequests(c, w, load)
		// The level's own rate or concurrency is in each level's config.
		c.Rate, c.Concurrency = 0, 0
	}
}

// recordConversations writes a level of a dataset's conversations into c:
// the series' description, the level's rate, and the dataset's sizing
// from the conversation the level starts at.
func recordConversations(c *results.Config, s *Series, l driver.CallLoad, offset int) {
	s.Describe(c, "rate")
	c.Rate = l.Rate
	if l.Concurrency > 0 {
		c.Mode, c.Concurrency = results.ModeClosed, l.Concurrency
	}
	sizing := s.Workload.Dataset.sizing
	sizing.Offset = offset
	c.DatasetSizing = &sizing
}

// recordDataset writes a level of a dataset's requests into c: its format
// and its sizing from the entry the level starts at (a trace's speedup is
// its schedule's, recorded with it).
func recordDataset(c *results.Config, d *DatasetFile, offset int) {
	c.DatasetFormat = string(d.Format())
	sizing := d.sizing
	sizing.Offset = offset
	c.DatasetSizing = &sizing
}
