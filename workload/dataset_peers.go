package workload

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// The formats of the peers' datasets: ShareGPT, AIPerf's single_turn and
// multi_turn, and Mooncake traces.

// shareGPT reads a ShareGPT record: its first human turn and the answer
// after it as one entry (the answer its reference), and the whole
// exchange as a conversation.
func (r recordOf) shareGPT() error {
	msgs, err := r.shareGPTMessages()
	if err != nil {
		return err
	}
	// LLaVA's and ShareGPT-4V's "image" goes with the first question.
	refs, err := imagesOf(r.keys, r.errorf)
	if err != nil {
		return err
	}
	msgs = withImages(msgs, refs)
	if err := r.firstExchange(msgs); err != nil {
		return err
	}
	if c, ok := conversationOf(msgs, r.n); ok {
		if id, ok, _ := r.str("id"); ok {
			c.ID = id
		}
		r.p.Conversations = append(r.p.Conversations, c)
	}
	return nil
}

// shareGPTRoles are the speakers ShareGPT's files name, as chat roles.
var shareGPTRoles = map[string]string{
	"human": "user", "user": "user", "system": "system",
	"gpt": "assistant", "assistant": "assistant", "chatgpt": "assistant", "bing": "assistant", "bard": "assistant", "model": "assistant",
}

// shareGPTMessages reads "conversations" as chat messages; a tool or
// function turn is not part of the exchange.
func (r recordOf) shareGPTMessages() ([]Message, error) {
	raw, ok := r.keys["conversations"]
	if !ok || string(raw) == "null" {
		return nil, r.errorf(`missing "conversations" (expected %s)`, formatHelp)
	}
	var turns []struct {
		From    string          `json:"from"`
		Role    string          `json:"role"`
		Value   *string         `json:"value"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &turns); err != nil {
		return nil, r.errorf(`"conversations" must be a list of {"from", "value"}: %v`, err)
	}
	var msgs []Message
	for _, t := range turns {
		role, ok := shareGPTRoles[strings.ToLower(cmp.Or(t.From, t.Role))]
		if !ok {
			continue
		}
		var text string
		var images []string
		if t.Value != nil {
			text = *t.Value
		} else if len(t.Content) > 0 {
			s, refs, err := content(t.Content)
			if err != nil {
				return nil, r.errorf("a %s turn's content %v", role, err)
			}
			text, images = s, refs
		}
		if role == "user" {
			text = stripImageTags(text)
		}
		msgs = append(msgs, Message{Role: role, Content: text, Images: images})
	}
	return msgs, nil
}

// firstExchange adds the single-turn entry: the first human turn and the
// answer after it, with a leading system turn as the system message.
// Conversations without both are skipped, as vLLM skips them.
func (r recordOf) firstExchange(msgs []Message) error {
	var sys []Message
	for i, m := range msgs {
		if m.Role == "system" && len(sys) == 0 && i == 0 {
			sys = append(sys, m)
			continue
		}
		if m.Role != "user" || m.Content == "" {
			continue
		}
		if i+1 < len(msgs) && msgs[i+1].Role == "assistant" {
			e := DatasetEntry{Messages: append(sys, Message{Role: "user", Content: m.Content, Images: m.Images}), Reference: msgs[i+1].Content, Line: r.n}
			var err error
			if e.MaxTokens, err = r.output(); err != nil {
				return err
			}
			r.p.Entries = append(r.p.Entries, e)
		}
		break
	}
	return nil
}

// texts reads AIPerf's "text" or "texts" (joined by newlines).
func textsOf(keys map[string]json.RawMessage, errorf func(string, ...any) error) (string, bool, error) {
	if raw, ok := keys["text"]; ok && string(raw) != "null" {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, errorf(`"text" must be a string`)
		}
		return s, true, nil
	}
	if raw, ok := keys["texts"]; ok && string(raw) != "null" {
		var ss []string
		if err := json.Unmarshal(raw, &ss); err != nil {
			return "", false, errorf(`"texts" must be a list of strings`)
		}
		return strings.Join(ss, "\n"), len(ss) > 0, nil
	}
	return "", false, nil
}

func (r recordOf) singleTurn() error {
	text, ok, err := textsOf(r.keys, r.errorf)
	if err != nil {
		return err
	}
	if !ok || text == "" {
		return r.errorf(`missing "text" (a single_turn line is {"text": "...", "output_length": N})`)
	}
	role, _, err := r.str("role")
	if err != nil {
		return err
	}
	if role != "" && role != "user" {
		return r.errorf(`role %q: a single_turn line is the user's`, role)
	}
	images, err := imagesOf(r.keys, r.errorf)
	if err != nil {
		return err
	}
	e := DatasetEntry{Messages: []Message{{Role: "user", Content: text, Images: images}}, Line: r.n}
	return r.keep(e)
}

func (r recordOf) multiTurn() error {
	var turns []map[string]json.RawMessage
	if err := json.Unmarshal(r.keys["turns"], &turns); err != nil || len(turns) == 0 {
		return r.errorf(`"turns" must be a non-empty list of {"text": ...}`)
	}
	c := Conversation{Line: r.n, ID: fmt.Sprintf("line-%d", r.n)}
	if raw, ok := r.keys["session_id"]; ok {
		var s any
		if json.Unmarshal(raw, &s) == nil && s != nil {
			c.ID = fmt.Sprint(s)
		}
	}
	var paused time.Duration
	for k, t := range turns {
		errorf := func(format string, a ...any) error {
			return r.errorf("turns[%d]: "+format, append([]any{k}, a...)...)
		}
		text, ok, err := textsOf(t, errorf)
		if err != nil {
			return err
		}
		var role string
		if raw, has := t["role"]; has {
			if json.Unmarshal(raw, &role) != nil {
				return errorf(`"role" must be a string`)
			}
		}
		switch {
		case role == "system" && k == 0:
			// A leading system turn holds the conversation's system prompt.
			c.System = text
			continue
		case role == "assistant":
			if len(c.Turns) == 0 {
				return errorf("an assistant turn before any user turn")
			}
			c.Turns[len(c.Turns)-1].Answer = text
			continue
		case role != "" && role != "user":
			return errorf("role %q (want user, assistant, or a leading system)", role)
		case !ok || text == "":
			return errorf(`missing "text"`)
		}
		ct := ConversationTurn{User: text}
		if ct.Images, err = imagesOf(t, errorf); err != nil {
			return err
		}
		if ct.MaxTokens, err = outputOf(t, r.p, errorf); err != nil {
			return err
		}
		if ct.Delay, ct.HasDelay, err = millisOf(t["delay"], "delay", errorf); err != nil {
			return err
		}
		if paused += ct.Delay; paused > maxTimestamp {
			return errorf("the turns' delays add up to more than %g ms", maxTimestampMs)
		}
		c.Turns = append(c.Turns, ct)
	}
	if len(c.Turns) == 0 {
		return r.errorf("no user turn")
	}
	r.p.Conversations = append(r.p.Conversations, c)
	r.p.Sessions = true
	// The first turn alone, for a requests workload.
	e := DatasetEntry{Messages: []Message{{Role: "user", Content: c.Turns[0].User, Images: append([]string(nil), c.Turns[0].Images...)}}, MaxTokens: c.Turns[0].MaxTokens, Line: r.n}
	if c.System != "" {
		e.Messages = append([]Message{{Role: "system", Content: c.System}}, e.Messages...)
	}
	r.p.Entries = append(r.p.Entries, e)
	return nil
}

func (r recordOf) mooncake() error {
	e := DatasetEntry{Line: r.n}
	text, hasText, err := r.str("text_input")
	if err != nil {
		return err
	}
	n, hasLen, err := r.count("input_length", maxInputLength)
	if err != nil {
		return err
	}
	switch {
	case hasText && text != "":
		e.Messages = []Message{{Role: "user", Content: text}}
	case hasLen && n > 0:
		e.InputLength = n
	default:
		return r.errorf(`a trace line needs "input_length" (a positive number of tokens) or "text_input"`)
	}
	if raw, ok := r.keys["hash_ids"]; ok && string(raw) != "null" && !hasText {
		var ids []float64
		if err := json.Unmarshal(raw, &ids); err != nil {
			return r.errorf(`"hash_ids" must be a list of numbers`)
		}
		if len(ids) > maxHashIDs {
			return r.errorf("%d hash_ids is more than %d", len(ids), maxHashIDs)
		}
		for i, id := range ids {
			if id < 0 || id != math.Trunc(id) || id > math.MaxInt32 {
				return r.errorf("hash_ids[%d] %v is not a non-negative whole number", i, id)
			}
			e.HashIDs = append(e.HashIDs, int(id))
		}
	}
	return r.keep(e)
}

// keep adds e, its output length and its timestamp read from the line,
// to the dataset's entries.
func (r recordOf) keep(e DatasetEntry) error {
	var err error
	if e.MaxTokens, err = r.output(); err != nil {
		return err
	}
	if err := r.stamp(&e); err != nil {
		return err
	}
	r.p.Entries = append(r.p.Entries, e)
	return nil
}
