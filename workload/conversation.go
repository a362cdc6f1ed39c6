package workload

import (
	"errors"
	"math/rand/v2"
	"time"
)

// Conversations replays a dataset's recorded conversations as calls: each
// user turn is sent with the whole history before it, the recorded
// assistant answers (or, with LiveHistory, the server's own), after a think
// time; every turn is measured.
type Conversations struct {
	Convs []Conversation
	// GapMin and GapMax bound the uniform think time before each turn
	// after the first, for turns whose file gives no delay of its own (an
	// AIPerf delay is kept as recorded unless IgnoreDelays).
	GapMin, GapMax time.Duration
	IgnoreDelays   bool
	// LiveHistory sends the server's own answers as history instead of
	// the recorded ones (which then only set each turn's length).
	LiveHistory bool
	// DefaultMaxTokens is a turn's output length when neither the file nor
	// a recorded answer gives one.
	DefaultMaxTokens int
	// Offset is the conversation call 0 takes (a sweep's levels continue).
	Offset int
	Seed   uint64
}

// Validate reports whether c can be replayed.
func (c Conversations) Validate() error {
	if len(c.Convs) == 0 {
		return errors.New("the dataset holds no conversations to replay")
	}
	if c.GapMin < 0 || c.GapMax < c.GapMin {
		return errors.New("the gap must satisfy 0 ≤ min ≤ max")
	}
	return nil
}

// conv is the conversation call i replays.
func (c Conversations) conv(i int) Conversation {
	n := len(c.Convs)
	return c.Convs[((c.Offset+i)%n+n)%n]
}

// Call implements Calls.
func (c Conversations) Call(i int) Call {
	cv := c.conv(i)
	call := Call{Index: i, System: cv.System, User: make([]string, len(cv.Turns)), Gaps: make([]time.Duration, len(cv.Turns))}
	r := rand.New(rand.NewPCG(c.Seed^0xc0417, uint64(c.Offset+i)))
	for k, t := range cv.Turns {
		call.User[k] = t.User
		if k == 0 {
			continue
		}
		switch {
		case t.HasDelay && !c.IgnoreDelays:
			call.Gaps[k] = t.Delay
		case c.GapMax > c.GapMin:
			call.Gaps[k] = c.GapMin + time.Duration(r.Int64N(int64(c.GapMax-c.GapMin)+1))
		default:
			call.Gaps[k] = c.GapMin
		}
	}
	return call
}

// Turn implements Calls: the system prompt, every earlier turn and its
// answer (recorded, or live with LiveHistory, or live where none was
// recorded), and turn k. A turn whose answer was recorded asks for that
// answer's length with ignore_eos, as a ShareGPT entry does.
func (c Conversations) Turn(call Call, k int, answers []string) Request {
	cv := c.conv(call.Index)
	msgs := make([]Message, 0, 2*k+1)
	if cv.System != "" {
		msgs = append(msgs, Message{Role: "system", Content: cv.System})
	}
	for j := 0; j < k; j++ {
		msgs = append(msgs, Message{Role: "user", Content: cv.Turns[j].User, Images: cv.Turns[j].Images})
		if j == k-1 {
			break
		}
		answer := cv.Turns[j].Answer
		if (c.LiveHistory || answer == "") && j < len(answers) {
			answer = answers[j]
		}
		msgs = append(msgs, Message{Role: "assistant", Content: answer})
	}
	t := cv.Turns[k-1]
	req := Request{Messages: msgs, MaxTokens: t.MaxTokens, Tag: k}
	if t.MaxTokens == 0 && t.AnswerTokens > 0 {
		req.MaxTokens, req.IgnoreEOS = t.AnswerTokens, true
	}
	if req.MaxTokens <= 0 {
		req.MaxTokens = c.DefaultMaxTokens
	}
	if req.MaxTokens <= 0 {
		req.MaxTokens = DefaultMaxTokens
	}
	return req
}

// MeasuredTurns implements Calls: every turn.
func (c Conversations) MeasuredTurns(i int) int { return len(c.conv(i).Turns) }

// ColdThreshold implements Calls: recorded conversations are not judged
// cold or warm turn by turn; the run compares the cache hit overall.
func (Conversations) ColdThreshold() int { return 0 }

// PickConversations takes the conversations in an order shuffled by the
// seed, n of them (n ≤ 0: all), and counts each recorded answer's tokens
// with count, so a replayed turn asks for the length the recording
// answered with.
func PickConversations(all []Conversation, count TokenCounter, n int, seed uint64) []Conversation {
	convs := append([]Conversation(nil), all...)
	r := rand.New(rand.NewPCG(seed, 0xc0417))
	r.Shuffle(len(convs), func(i, j int) { convs[i], convs[j] = convs[j], convs[i] })
	if n > 0 && n < len(convs) {
		convs = convs[:n]
	}
	out := make([]Conversation, len(convs))
	for i, cv := range convs {
		cv.Turns = append([]ConversationTurn(nil), cv.Turns...)
		for k := range cv.Turns {
			if a := cv.Turns[k].Answer; a != "" {
				cv.Turns[k].AnswerTokens = count.Count(a)
			}
		}
		out[i] = cv
	}
	return out
}
