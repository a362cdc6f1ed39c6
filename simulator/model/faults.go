package model

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"
)

// Fault kinds.
const (
	Fault429           = "error_429"
	Fault500           = "error_500"
	Fault503           = "error_503"
	Fault401           = "error_401"
	FaultContextLength = "context_length"
	FaultCut           = "cut"
	FaultStall         = "stall"
	FaultSpike         = "spike"
	FaultOverload      = "overload"
)

var FaultKinds = []string{Fault429, Fault500, Fault503, Fault401, FaultContextLength, FaultCut, FaultStall, FaultSpike}

// Fault parameter bounds: a stall longer than an hour or a spike of more
// than 1,000× is a typo, and a duration in ms near 1e13 overflowed the
// nanosecond clock into no stall at all.
const (
	maxStallMs    = 3_600_000
	maxFactor     = 1000
	maxAfter      = 1 << 20
	maxRetryAfter = 3600
)

// FaultSpec is a model's failure injection: rules by rate or prompt match,
// and a real server's overload behaviour.
type FaultSpec struct {
	// Seed makes rate draws repeat: a request's draw is a hash of the seed,
	// the rule and the request's content, so the same requests get the same
	// faults whatever order they arrive in.
	Seed  uint64      `yaml:"seed" json:"seed"`
	Rules []FaultRule `yaml:"rules" json:"rules"`
	// MaxWaiting > 0 makes requests that find that many already queued get
	// OverloadStatus (429 or 503) at once.
	MaxWaiting     int `yaml:"max_waiting" json:"max_waiting"`
	OverloadStatus int `yaml:"overload_status" json:"overload_status"`
}

// FaultRule injects one kind of fault.
type FaultRule struct {
	Kind string `yaml:"kind" json:"kind"`
	// Rate is the fraction of requests hit (0 with Match means every
	// matching request).
	Rate float64 `yaml:"rate" json:"rate"`
	// Match, when set, limits the rule to prompts containing it
	// (case-insensitive).
	Match string `yaml:"match" json:"match,omitempty"`
	// AfterTokens is where a cut or stall happens.
	AfterTokens int `yaml:"after_tokens" json:"after_tokens,omitempty"`
	// DurationMs is the length of a stall.
	DurationMs float64 `yaml:"duration_ms" json:"duration_ms,omitempty"`
	// Factor multiplies time to first token for a spike.
	Factor float64 `yaml:"factor" json:"factor,omitempty"`
	// RetryAfterS is sent as Retry-After with a 429 (default 1; 0 sends
	// none).
	RetryAfterS *int `yaml:"retry_after_s" json:"retry_after_s,omitempty"`
}

// Validate reports a spec that cannot be applied.
func (f *FaultSpec) Validate() error {
	if f.MaxWaiting < 0 {
		return errors.New("max_waiting must not be negative")
	}
	if f.OverloadStatus != 0 && f.OverloadStatus != 429 && f.OverloadStatus != 503 {
		return errors.New("overload_status must be 429 or 503")
	}
	for i, r := range f.Rules {
		if !ValidKind(r.Kind) {
			return fmt.Errorf("rule %d: unknown kind %q (one of %s)", i+1, r.Kind, strings.Join(FaultKinds, ", "))
		}
		if r.Rate < 0 || r.Rate > 1 {
			return fmt.Errorf("rule %d: rate must be in [0, 1]", i+1)
		}
		if r.Rate == 0 && r.Match == "" {
			return fmt.Errorf("rule %d: give a rate or a match", i+1)
		}
		if r.AfterTokens < 0 || r.DurationMs < 0 || r.Factor < 0 || (r.RetryAfterS != nil && *r.RetryAfterS < 0) {
			return fmt.Errorf("rule %d: numbers must not be negative", i+1)
		}
		if r.AfterTokens > maxAfter || r.DurationMs > maxStallMs || r.Factor > maxFactor || (r.RetryAfterS != nil && *r.RetryAfterS > maxRetryAfter) {
			return fmt.Errorf("rule %d: after_tokens at most %d, duration_ms at most %d (an hour), factor at most %d, retry_after_s at most %d",
				i+1, maxAfter, maxStallMs, maxFactor, maxRetryAfter)
		}
	}
	return nil
}

func ValidKind(k string) bool {
	for _, v := range FaultKinds {
		if v == k {
			return true
		}
	}
	return false
}

// FaultDefaults fills the parameters a rule or a header left out.
func FaultDefaults(r FaultRule) FaultRule {
	if r.AfterTokens == 0 && (r.Kind == FaultCut || r.Kind == FaultStall) {
		r.AfterTokens = 3
	}
	if r.DurationMs == 0 && r.Kind == FaultStall {
		r.DurationMs = 2000
	}
	if r.Factor == 0 && r.Kind == FaultSpike {
		r.Factor = 10
	}
	if r.RetryAfterS == nil && r.Kind == Fault429 {
		one := 1
		r.RetryAfterS = &one
	}
	return r
}

// Decide picks the fault for one request: the header's kind if given,
// else the first rule whose match and rate draw hit.
func (s *FaultSpec) Decide(header, prompt string, occurrence uint32) (FaultRule, bool) {
	if header != "" {
		for _, r := range s.Rules {
			if r.Kind == header {
				return FaultDefaults(r), true
			}
		}
		return FaultDefaults(FaultRule{Kind: header}), true
	}
	lower := ""
	for i, r := range s.Rules {
		if r.Match != "" {
			if lower == "" {
				lower = strings.ToLower(prompt)
			}
			if !strings.Contains(lower, strings.ToLower(r.Match)) {
				continue
			}
			if r.Rate == 0 {
				return FaultDefaults(r), true
			}
		}
		if draw(s.Seed, i, occurrence, prompt) < r.Rate {
			return FaultDefaults(r), true
		}
	}
	return FaultRule{}, false
}

// draw is a uniform number in [0, 1) from the seed, the rule, the
// request's content and how many times that content came before.
func draw(seed uint64, rule int, occurrence uint32, content string) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d/%d/", seed, rule, occurrence)
	h.Write([]byte(content))
	return float64(h.Sum64()>>11) / (1 << 53)
}

func (r FaultRule) Stall() time.Duration {
	return time.Duration(r.DurationMs * float64(time.Millisecond))
}
