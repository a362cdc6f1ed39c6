package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Voice describes the multi-turn call workload: calls arrive open loop,
// each with its own long system prompt shared by its turns; turn 1 warms
// the prefix with a one-token answer, and later turns carry the whole
// history after a gap in which the caller speaks.
type Voice struct {
	// SystemPromptTokens is the size of each call's system prompt.
	SystemPromptTokens int
	// UserTokens is the size of each user message.
	UserTokens int
	// Turns per call, including the warm-up turn 1.
	Turns int
	// GapMin and GapMax bound the uniform gap between a turn's end and the
	// next turn.
	GapMin, GapMax time.Duration
	// OutputTokens is asked of every measured turn (with ignore_eos).
	OutputTokens int
	Seed         uint64
	// WordsPerToken scales filler to the server's tokenizer (see
	// Calibrate); 0 means 1.
	WordsPerToken float64
	// Nonce, when set, is part of every call's identifier, so calls of one
	// run never share a prefix with an earlier run's still in the cache.
	Nonce string
}

// DefaultVoice returns the defaults of a voice-agent fleet: an 18,000-token
// system prompt, 4 turns, 5–7 s gaps, 100-token answers.
func DefaultVoice() Voice {
	return Voice{SystemPromptTokens: 18000, UserTokens: 40, Turns: 4, GapMin: 5 * time.Second, GapMax: 7 * time.Second, OutputTokens: 100, Seed: 1}
}

// Validate reports every problem with v.
func (v Voice) Validate() error {
	var errs []error
	if v.SystemPromptTokens < 1 || v.UserTokens < 1 || v.OutputTokens < 1 {
		errs = append(errs, errors.New("system prompt, user and output tokens must be positive"))
	}
	if v.Turns < 2 {
		errs = append(errs, errors.New("a call needs at least 2 turns: turn 1 only warms the prefix"))
	}
	if v.GapMin < 0 || v.GapMax < v.GapMin {
		errs = append(errs, errors.New("the gap must satisfy 0 ≤ min ≤ max"))
	}
	return errors.Join(errs...)
}

// Calls hands out multi-turn calls: the voice workload's synthetic ones,
// or a dataset's recorded conversations (see Conversations). Call and
// Turn are pure functions of their arguments.
type Calls interface {
	// Call returns call i's script.
	Call(i int) Call
	// Turn builds turn k (1-based) of c given the live answers so far.
	Turn(c Call, k int, answers []string) Request
	// MeasuredTurns is how many of call i's turns are measured, without
	// writing its script.
	MeasuredTurns(i int) int
	// ColdThreshold is the cached tokens under which a measured turn found
	// its prefix cold (0: not judged).
	ColdThreshold() int
}

// Call is one call's script: who it is, what the caller says in each turn,
// and how long the caller speaks before each turn after the first.
type Call struct {
	Index  int
	System string
	User   []string        // one per turn
	Gaps   []time.Duration // Gaps[k] precedes turn k+1 (Gaps[0] is zero)
	// Warmup is how many leading turns are sent but not measured (the
	// voice workload's turn 1, which warms the call's prefix).
	Warmup int
}

// Turns is how many turns the call has.
func (c Call) Turns() int { return len(c.User) }

// PausedBefore is how long the caller paused, in all, before turn k
// (1-based): the gaps of turns 2 to k, which are the caller's time and
// none of the server's.
func (c Call) PausedBefore(k int) time.Duration {
	var d time.Duration
	for j := 1; j < k && j < len(c.Gaps); j++ {
		d += c.Gaps[j]
	}
	return d
}

// Measured is how many of them are measured.
func (c Call) Measured() int { return len(c.User) - c.Warmup }

// Call returns call i's script. It is a pure function of the seed and i.
func (v Voice) Call(i int) Call {
	r := rand.New(rand.NewPCG(v.Seed, uint64(i)*0x9e3779b97f4a7c15+7))
	// A random identifier at the very start makes the prompt unique from
	// its first block, so no two calls share a cached prefix.
	id := fmt.Sprintf("Call %08x-%04x-%04x%s: ", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, v.Nonce)
	c := Call{Index: i, System: id + "You are a voice agent. " + Filler(v.SystemPromptTokens, v.WordsPerToken, v.Seed^0x5151, uint64(i)*2+1), Warmup: 1}
	c.User = make([]string, v.Turns)
	c.Gaps = make([]time.Duration, v.Turns)
	for k := 0; k < v.Turns; k++ {
		c.User[k] = Filler(v.UserTokens, v.WordsPerToken, v.Seed^0xa5a5, uint64(i)*1024+uint64(k))
		if k > 0 {
			span := v.GapMax - v.GapMin
			g := v.GapMin
			if span > 0 {
				g += time.Duration(r.Int64N(int64(span) + 1))
			}
			c.Gaps[k] = g
		}
	}
	return c
}

// MeasuredTurns implements Calls: every turn but the first.
func (v Voice) MeasuredTurns(int) int { return v.Turns - 1 }

// ColdThreshold implements Calls: a turn that found less than half the
// system prompt cached found it cold.
func (v Voice) ColdThreshold() int { return max(v.SystemPromptTokens/2, 1) }

// Turn builds turn k (1-based) of the call given the answers of the turns
// before it. Turn 1 asks for a single token; later turns for
// OutputTokens with ignore_eos, so the length is exact.
func (v Voice) Turn(c Call, k int, answers []string) Request {
	msgs := make([]Message, 0, 2*k)
	msgs = append(msgs, Message{Role: "system", Content: c.System})
	for j := 1; j <= k; j++ {
		msgs = append(msgs, Message{Role: "user", Content: c.User[j-1]})
		if j < k {
			msgs = append(msgs, Message{Role: "assistant", Content: answers[j-1]})
		}
	}
	mt := v.OutputTokens
	if k == 1 {
		mt = 1
	}
	return Request{Messages: msgs, MaxTokens: mt, IgnoreEOS: true, Tag: k}
}

// WithAnswer is req with the server's answer as the next assistant
// message: the sequence the server holds once the turn is done.
func WithAnswer(req *Request, answer []byte) *Request {
	r := *req
	r.Messages = append(append([]Message(nil), req.Messages...), Message{Role: "assistant", Content: string(answer)})
	return &r
}
