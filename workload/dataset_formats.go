package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// recordOf reads the fields of one record of a dataset.
type recordOf struct {
	keys map[string]json.RawMessage
	n    int
	p    *ParsedDataset
}

func (r recordOf) errorf(format string, a ...any) error {
	return fmt.Errorf("line %d: "+format, append([]any{r.n}, a...)...)
}

func (r recordOf) has(k string) bool { _, ok := r.keys[k]; return ok }

// str reads a string field; ok is false when it is absent or null.
func (r recordOf) str(k string) (string, bool, error) {
	raw, ok := r.keys[k]
	if !ok || string(raw) == "null" {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, r.errorf("%q must be a string", k)
	}
	return s, true, nil
}

// count reads a non-negative whole number no larger than limit.
func (r recordOf) count(k string, limit int) (int, bool, error) {
	raw, ok := r.keys[k]
	if !ok || string(raw) == "null" {
		return 0, false, nil
	}
	return countOf(raw, k, limit, r.errorf)
}

func countOf(raw json.RawMessage, k string, limit int, errorf func(string, ...any) error) (int, bool, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, false, errorf("%q must be a number", k)
	}
	switch {
	case f < 0:
		return 0, false, errorf("%s must not be negative", k)
	case f != math.Trunc(f):
		return 0, false, errorf("%s %v is not a whole number", k, f)
	case f > float64(limit):
		return 0, false, errorf("%s %v is more than %d", k, f, limit)
	}
	return int(f), true, nil
}

// millis reads a time in milliseconds.
func (r recordOf) millis(k string) (time.Duration, bool, error) {
	return millisOf(r.keys[k], k, r.errorf)
}

func millisOf(raw json.RawMessage, k string, errorf func(string, ...any) error) (time.Duration, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, false, errorf("%q must be a number of milliseconds", k)
	}
	if f < 0 || f > maxTimestampMs {
		return 0, false, errorf("%s %v ms is outside 0..%g", k, f, maxTimestampMs)
	}
	return time.Duration(f * float64(time.Millisecond)), true, nil
}

// output reads the output length under whichever name the peers use.
func (r recordOf) output() (int, error) {
	return outputOf(r.keys, r.p, r.errorf)
}

func outputOf(keys map[string]json.RawMessage, p *ParsedDataset, errorf func(string, ...any) error) (int, error) {
	for _, k := range outputKeys {
		raw, ok := keys[k]
		if !ok || string(raw) == "null" {
			continue
		}
		n, _, err := countOf(raw, k, MaxOutputTokens, errorf)
		if err != nil {
			return 0, err
		}
		if p.LengthKey == "" {
			p.LengthKey = k
		}
		return n, nil
	}
	return 0, nil
}

// stamp reads a line's timestamp (ms from the trace's start) or, without
// one, its delay after the line before, as AIPerf's files give them.
func (r recordOf) stamp(e *DatasetEntry) error {
	if ts, ok, err := r.millis("timestamp"); err != nil {
		return err
	} else if ok {
		e.Timestamp, e.Timed = ts, true
		r.p.Timed = true
		return nil
	}
	if d, ok, err := r.millis("delay"); err != nil {
		return err
	} else if ok {
		prev := time.Duration(0)
		if n := len(r.p.Entries); n > 0 {
			prev = r.p.Entries[n-1].Timestamp
		}
		if prev+d > maxTimestamp {
			return r.errorf("delay %v ms puts the line more than %g ms after the trace's start",
				d.Seconds()*1000, maxTimestampMs)
		}
		e.Timestamp, e.Timed = prev+d, true
		r.p.Timed = true
	}
	return nil
}

// content reads a chat message's content: a string, or OpenAI's list of
// parts, whose text parts are joined and whose image parts (image_url,
// input_image, image) give the message's images. A part of a kind knee
// does not send (audio, video) is an error, not a part silently left out.
func content(raw json.RawMessage) (string, []string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil, nil
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		ImageURL json.RawMessage `json:"image_url"`
		Image    json.RawMessage `json:"image"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", nil, errors.New("must be a string or a list of content parts")
	}
	var b strings.Builder
	var images []string
	for i, p := range parts {
		switch p.Type {
		case "text", "input_text", "":
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		case "image_url", "input_image", "image":
			src := p.ImageURL
			if len(src) == 0 {
				src = p.Image
			}
			ref, ok := "", false
			if len(src) > 0 {
				ref, ok = imageRef(src)
			}
			if !ok || ref == "" {
				return "", nil, fmt.Errorf("part %d (%s) names no image: give image_url.url", i, p.Type)
			}
			images = append(images, ref)
		default:
			return "", nil, fmt.Errorf("part %d is %q: knee sends text and images", i, p.Type)
		}
	}
	if len(images) > maxImagesPerMessage {
		return "", nil, fmt.Errorf("%d images is more than %d a message", len(images), maxImagesPerMessage)
	}
	return b.String(), images, nil
}

func (r recordOf) prompt() error { return r.guidePrompt() }

func (r recordOf) chat() error {
	raw, ok := r.keys["messages"]
	if !ok {
		return r.errorf(`missing "messages" (a chat line is {"messages": [{"role": ..., "content": ...}]})`)
	}
	var items []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &items); err != nil || len(items) == 0 {
		return r.errorf(`"messages" must be a non-empty list of {"role", "content"}`)
	}
	msgs := make([]Message, 0, len(items))
	for i, m := range items {
		switch m.Role {
		case "system", "user", "assistant", "developer", "tool":
		default:
			return r.errorf("messages[%d] has role %q (want system, user, assistant, developer or tool)", i, m.Role)
		}
		text, images, err := content(m.Content)
		if err != nil {
			return r.errorf("messages[%d].content %v", i, err)
		}
		if len(images) > 0 && m.Role != "user" {
			return r.errorf("messages[%d] is %s's and carries images: images go in user messages", i, m.Role)
		}
		msgs = append(msgs, Message{Role: m.Role, Content: text, Images: images})
	}
	if err := r.keep(DatasetEntry{Messages: msgs, Line: r.n}); err != nil {
		return err
	}
	if c, ok := conversationOf(msgs, r.n); ok {
		r.p.Conversations = append(r.p.Conversations, c)
	}
	return nil
}

// conversationOf reads chat messages as turns: leading system (or
// developer) messages are the system prompt, each user message opens a
// turn and the assistant message after it is that turn's answer. Tool
// messages make it no plain conversation.
func conversationOf(msgs []Message, line int) (Conversation, bool) {
	c := Conversation{Line: line, ID: fmt.Sprintf("line-%d", line)}
	i := 0
	var sys []string
	for ; i < len(msgs) && (msgs[i].Role == "system" || msgs[i].Role == "developer"); i++ {
		sys = append(sys, msgs[i].Content)
	}
	c.System = strings.Join(sys, "\n")
	for ; i < len(msgs); i++ {
		switch m := msgs[i]; m.Role {
		case "user":
			c.Turns = append(c.Turns, ConversationTurn{User: m.Content, Images: append([]string(nil), m.Images...)})
		case "assistant":
			if len(c.Turns) == 0 || c.Turns[len(c.Turns)-1].Answer != "" {
				return c, false
			}
			c.Turns[len(c.Turns)-1].Answer = m.Content
		default:
			return c, false
		}
	}
	return c, len(c.Turns) > 0
}
