package content

import (
	"fmt"
	"strings"
)

// Message is one chat message as the simulator sees it: a role and its
// text (text parts already joined).
type Message struct {
	Role string
	Text string
}

// GenRequest is what the content side needs from a request.
type GenRequest struct {
	Model    string
	Chat     bool
	Messages []Message
	Prompt   string
	// MaxTokens is nil when the request did not set it.
	MaxTokens *int
	Seed      *int64
	IgnoreEOS bool
	Stop      []string
	// WantIDs asks for the prompt's token ids (for prefix caching).
	WantIDs bool
	// Tools are the names of the functions the request offers, and
	// ToolChoice its tool_choice: "" (auto), none, required, or a name.
	Tools      []string
	ToolChoice string
	// ToolArgs is each offered tool's argument a call fills, by the
	// tool's schema ("query" where it names none).
	ToolArgs map[string]string
	// Words, when Vocab is set, is the text of the last message, a
	// user's (or the prompt, of a completion), whose Text (or Prompt) is left empty: a
	// prompt of Vocab's words, said without being written out.
	Words []uint16
	Vocab *WordTable
	// IDs, when set, is a slice the prompt's ids said from words may be
	// listed in (its contents are overwritten): a caller that knows when
	// the last ones it was handed are done with hands them back.
	IDs []uint64
	// Known, when set, keeps long messages' ids from one request to the
	// next (a conversation's turns): every message's but the last, which
	// a later turn sends again.
	Known *IDCache
	// AnswerUnread says the caller reads of the answer only its length
	// and, through its ids, that it differs from every other prompt's
	// (a prediction's single requests): a synthetic answer whose length
	// needs no digest is then said as UnreadToken repeated (see unread.go).
	AnswerUnread bool
}

// Plan is what will be said: everything the timing side needs, and nothing
// about time.
type Plan struct {
	PromptTokens int
	PromptIDs    []uint64
	Tokens       []string
	FinishReason string
	EntryID      string
	Variant      int
	// ToolName, when set, makes the answer's tokens (after any thought)
	// a call of that function, its arguments streamed.
	ToolName string
	// Thought is the scripted thinking before the answer (the responses
	// file's think), when the entry has some; ThoughtTokens is how many
	// of Tokens are thought, once the server's reasoning put them first.
	Thought       []string
	ThoughtTokens int
	// EncoderFLOPs is the vision encoder's work on the prompt's images.
	EncoderFLOPs float64
	// Adapter is the LoRA adapter serving it (0: the base model) and
	// Priority its priority, for the scheduler core.
	Adapter, Priority int
	// Unread says every one of Tokens is UnreadToken (GenRequest.AnswerUnread).
	Unread bool
}

// chatOverhead is the fixed number of tokens a chat template adds around
// each message (start marker, role, separator, end marker); replyPrimer is
// what opens the assistant's reply. They are real ids in the sequence, so
// the next turn of a conversation, which carries this reply as a message,
// repeats the same ids and hits the prefix cache.
const (
	chatOverhead = 4
	replyPrimer  = 3
)

var (
	idStart     = TokenID("<|im_start|>")
	idEnd       = TokenID("<|im_end|>")
	idNewline   = TokenID("\n")
	idAssistant = TokenID("assistant")
)

// promptTokens counts (and, if asked, lists) the prompt's tokens.
func PromptTokens(g *GenRequest) (int, []uint64) {
	if g.Vocab != nil {
		return wordPromptTokens(g, 0)
	}
	if !g.Chat {
		if g.WantIDs {
			ids := AppendTokenIDs(nil, g.Prompt)
			return len(ids), ids
		}
		return CountTokens(g.Prompt), nil
	}
	if !g.WantIDs {
		n := replyPrimer
		for _, m := range g.Messages {
			n += chatOverhead + CountTokens(m.Text)
		}
		return n, nil
	}
	size := replyPrimer
	for _, m := range g.Messages {
		size += chatOverhead + len(m.Text)/3
	}
	ids := make([]uint64, 0, size)
	for k, m := range g.Messages {
		ids = append(ids, idStart, TokenID(m.Role), idNewline)
		if k < len(g.Messages)-1 {
			// Sent again by the next turn, if there is one.
			ids = g.Known.appendIDs(ids, m.Text)
		} else {
			ids = AppendTokenIDs(ids, m.Text)
		}
		ids = append(ids, idEnd)
	}
	ids = append(ids, idStart, idAssistant, idNewline)
	return len(ids), ids
}

// APIError is a request error with an OpenAI-shaped body.
type APIError struct {
	Status  int
	Type    string
	Code    string
	Param   string
	Message string
}

// Error returns the message.
func (e *APIError) Error() string { return e.Message }

// Generate decides the answer to g for a model with the given context
// length. Matching uses the last user message with surrounding whitespace
// removed, case-insensitively.
func (r *Responder) Generate(g *GenRequest, contextLength int) (*Plan, error) {
	if g.Vocab != nil && (!r.saysWithoutText() || g.Chat && (len(g.Messages) == 0 || g.Messages[len(g.Messages)-1].Role != "user")) {
		g = g.spelled()
	}
	if g.Vocab == nil || !g.WantIDs {
		return r.generate(g, contextLength)
	}
	// Said from words: the prompt's ids are listed once the answer's
	// length is known, with room for the answer's after them, which
	// engine.Request puts there rather than copying both.
	counted := *g
	counted.WantIDs = false
	plan, err := r.generate(&counted, contextLength)
	if err == nil {
		_, plan.PromptIDs = wordPromptTokens(g, len(plan.Tokens))
	}
	return plan, err
}

// generate is Generate of a request whose words, if any, the responder
// answers without their text.
func (r *Responder) generate(g *GenRequest, contextLength int) (*Plan, error) {
	n, ids := PromptTokens(g)
	if err := CheckContext(n, g.MaxTokens, contextLength); err != nil {
		return nil, err
	}
	limit := contextLength - n
	if g.MaxTokens != nil {
		limit = *g.MaxTokens
	}
	raw := LastUserText(g)
	text := strings.TrimSpace(raw)
	var res matchResult
	if len(r.entries) > 0 {
		res = r.match(text, lowerASCII(text))
	}
	id, ans := "default", r.def
	if res.entry != nil {
		id, ans = res.entry.id, res.entry.answer
	}
	if g.AnswerUnread {
		if plan, ok := unreadPlan(ans, g, limit); ok {
			plan.PromptTokens, plan.PromptIDs, plan.EntryID = n, ids, id
			return plan, nil
		}
	}
	digest := r.digest(g, id, text)
	fill := func(name string) string {
		switch name {
		case "last_user_message":
			return raw
		case "model":
			return g.Model
		}
		return res.groups[name]
	}
	plan := &Plan{PromptTokens: n, PromptIDs: ids, EntryID: id, FinishReason: "stop"}
	ans.say(plan, g, fill, digest, limit)
	if ans.think != nil {
		plan.Thought = Tokenize(ans.think.render(fill))
	}
	if ans.callArgs != nil && offers(g, ans.callName) {
		plan.Tokens, plan.ToolName, plan.FinishReason = Tokenize(ans.callArgs.render(fill)), ans.callName, "tool_calls"
		if len(plan.Tokens) > limit {
			plan.Tokens, plan.FinishReason = plan.Tokens[:max(limit, 0)], "length"
		}
		return plan, nil
	}
	if g.IgnoreEOS && g.MaxTokens != nil {
		// Without an end-of-sequence token the model keeps talking until
		// max_tokens: the answer is padded with filler to exactly that,
		// and it ends for length even when its natural end fell there.
		if len(plan.Tokens) < limit {
			more := fillerTokens(limit-len(plan.Tokens)+1, digest^0x5bd1e995)[1:]
			plan.Tokens = append(plan.Tokens, more...)
		}
		plan.FinishReason = "length"
	}
	return plan, nil
}

// digest is what picks the request's answer: its seed (the request's, or
// the responder's), the entry and the prompt's text or words.
func (r *Responder) digest(g *GenRequest, id, text string) uint64 {
	seed := r.seed
	if g.Seed != nil {
		seed = uint64(*g.Seed)
	}
	if g.Vocab != nil {
		return g.Vocab.fnv(digestHead(seed, id), g.Words)
	}
	return digestOf(seed, id, text)
}

// say sets plan's answer tokens: synthetic filler of a drawn length, or a
// variant rendered, cut at a stop sequence; either cut at limit.
func (ans *compiledAnswer) say(plan *Plan, g *GenRequest, fill func(string) string, digest uint64, limit int) {
	if ans.synthetic {
		want := ans.min + int(digest%uint64(ans.max-ans.min+1))
		plan.Tokens = fillerTokens(min(want, max(limit, 0)), digest)
		if want > limit {
			plan.FinishReason = "length"
		}
		return
	}
	plan.Variant = int(digest % uint64(len(ans.variants)))
	out := ans.variants[plan.Variant].render(fill)
	for _, s := range g.Stop {
		if s == "" {
			continue
		}
		if i := strings.Index(out, s); i >= 0 {
			out = out[:i]
		}
	}
	plan.Tokens = Tokenize(out)
	if len(plan.Tokens) > limit {
		plan.Tokens = plan.Tokens[:max(limit, 0)]
		plan.FinishReason = "length"
	}
}

// CheckContext refuses, as vLLM does, a request whose prompt of n tokens
// and max_tokens (nil: not set) cannot fit a context of contextLength.
func CheckContext(n int, maxTokens *int, contextLength int) error {
	if maxTokens != nil {
		if *maxTokens > contextLength-n {
			return &APIError{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded", Param: "messages",
				Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
					contextLength, n+*maxTokens, n, *maxTokens)}
		}
		return nil
	}
	if contextLength-n < 1 {
		return &APIError{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded", Param: "messages",
			Message: fmt.Sprintf("This model's maximum context length is %d tokens, and the messages alone are %d tokens.", contextLength, n)}
	}
	return nil
}

// LastUserText is the text the responses are matched against: the last
// user message, or a completion's prompt.
func LastUserText(g *GenRequest) string {
	if !g.Chat {
		return g.Prompt
	}
	for i := len(g.Messages) - 1; i >= 0; i-- {
		if g.Messages[i].Role == "user" {
			return g.Messages[i].Text
		}
	}
	return ""
}

// digestOf hashes the seed, the entry and the input, so the same request
// gets the same answer across restarts.
func digestOf(seed uint64, id, text string) uint64 {
	// FNV-1a over the seed's eight bytes (little-endian), the id, a zero
	// byte and the text, hashed in place: a prompt is not copied to be
	// hashed.
	return fnvString(digestHead(seed, id), text)
}

// digestHead is digestOf's hash before the text.
func digestHead(seed uint64, id string) uint64 {
	h := uint64(fnvOffset)
	for k := range 8 {
		h = (h ^ (seed >> (8 * k) & 0xff)) * fnvPrime
	}
	h = fnvString(h, id)
	return h * fnvPrime // the zero byte: h ^ 0 is h
}

// fillerVocabulary holds lower-case words; each, with a leading space, is
// one token.
var fillerVocabulary = strings.Fields(`the model answers with plain words so every token is one word long and the
count stays exact while the text still reads like a long and patient reply about systems servers queues caches
latency throughput batches tokens requests streams memory blocks schedules arrivals load curves knees limits
budgets steps prompts answers users agents calls turns gaps windows percentiles tails medians rates levels`)

// spacedVocabulary is fillerVocabulary with leading spaces, built once so
// filler costs no allocation per token.
var spacedVocabulary = func() []string {
	out := make([]string, len(fillerVocabulary))
	for i, w := range fillerVocabulary {
		out[i] = " " + w
	}
	return out
}()

// fillerTokens returns n filler tokens chosen by a generator seeded with
// digest.
func fillerTokens(n int, digest uint64) []string {
	if n <= 0 {
		return nil
	}
	out := make([]string, n)
	x := digest | 1
	for i := range out {
		// xorshift64*: cheap, deterministic and good enough for word choice.
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		k := (x * 2685821657736338717) >> 33 % uint64(len(fillerVocabulary))
		if i == 0 {
			out[i] = fillerVocabulary[k]
		} else {
			out[i] = spacedVocabulary[k]
		}
	}
	return out
}

// offers reports whether the request lets the model call the function
// name now: it offers it, tool_choice is not none (nor another
// function), and the last message is not a tool's result, which the
// model answers in words.
func offers(g *GenRequest, name string) bool {
	if g.ToolChoice == "none" || g.ToolChoice != "" && g.ToolChoice != "auto" && g.ToolChoice != "required" && g.ToolChoice != name {
		return false
	}
	if n := len(g.Messages); n > 0 && g.Messages[n-1].Role == "tool" {
		return false
	}
	for _, t := range g.Tools {
		if t == name {
			return true
		}
	}
	return false
}
