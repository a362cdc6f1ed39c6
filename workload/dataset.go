package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// DatasetFormat names a --dataset file's shape.
type DatasetFormat string

// Dataset formats. Auto detects the format from the content.
const (
	FormatAuto     DatasetFormat = "auto"
	FormatPrompt   DatasetFormat = "prompt"   // JSONL of {"prompt": "...", "max_tokens": N}
	FormatChat     DatasetFormat = "chat"     // JSONL of {"messages": [...], "max_tokens": N}
	FormatShareGPT DatasetFormat = "sharegpt" // JSON array of {"conversations": [{"from", "value"}, ...]}
)

// formatHelp describes the accepted formats for error messages.
const formatHelp = `prompt JSONL ({"prompt": "...", "max_tokens": N} per line), ` +
	`chat JSONL ({"messages": [{"role": "user", "content": "..."}], "max_tokens": N} per line), ` +
	`or ShareGPT JSON ([{"conversations": [{"from": "human", "value": "..."}, {"from": "gpt", "value": "..."}]}])`

// DatasetEntry is one prompt of a dataset.
type DatasetEntry struct {
	// Messages are sent as they are (a prompt line is one user message).
	Messages []Message
	// MaxTokens is the entry's own max_tokens; 0 means the run's.
	MaxTokens int
	// Reference is a ShareGPT entry's recorded answer: its length, in
	// tokens, becomes the entry's output length, with ignore_eos, as
	// vLLM's benchmark does.
	Reference string
	// InputTokens and OutputTokens are the entry's sizes once counted
	// (Size); 0 before.
	InputTokens, OutputTokens int
	// Line is where the entry came from (a line, or an array index + 1).
	Line int
}

// ParseDataset reads a dataset in the given format (FormatAuto detects it:
// a JSON array is ShareGPT; JSONL lines with "messages" are chat, with
// "prompt" are prompts, with "conversations" are ShareGPT records one per
// line). Every error names the line and the formats accepted.
func ParseDataset(r io.Reader, format DatasetFormat) ([]DatasetEntry, DatasetFormat, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	if format == FormatAuto || format == "" {
		head, _ := br.Peek(64 << 10)
		var err error
		if format, err = detectFormat(head); err != nil {
			return nil, "", err
		}
	}
	var out []DatasetEntry
	var err error
	head, _ := br.Peek(64 << 10)
	jsonl := len(bytes.TrimLeft(head, " \t\r\n\ufeff")) > 0 && bytes.TrimLeft(head, " \t\r\n\ufeff")[0] == '{'
	switch {
	case format == FormatShareGPT && !jsonl:
		out, err = parseShareGPT(br)
	case format == FormatShareGPT:
		out, err = parseJSONL(br, format)
	}
	switch format {
	case FormatShareGPT:
	case FormatPrompt, FormatChat:
		out, err = parseJSONL(br, format)
	default:
		return nil, "", fmt.Errorf("unknown dataset format %q: use auto, prompt, chat or sharegpt", format)
	}
	if err != nil {
		return nil, format, err
	}
	if len(out) == 0 {
		return nil, format, fmt.Errorf("no usable entries (expected %s)", formatHelp)
	}
	return out, format, nil
}

func detectFormat(head []byte) (DatasetFormat, error) {
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	switch {
	case len(head) == 0:
		return "", errors.New("the file is empty")
	case head[0] == '[':
		return FormatShareGPT, nil
	case head[0] != '{':
		return "", fmt.Errorf("line 1 is not JSON; expected %s", formatHelp)
	}
	first, _, _ := bytes.Cut(head, []byte("\n"))
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(first, &keys); err != nil {
		return "", fmt.Errorf("line 1 is not a JSON object (%v); expected %s", err, formatHelp)
	}
	switch {
	case keys["messages"] != nil:
		return FormatChat, nil
	case keys["conversations"] != nil:
		return FormatShareGPT, nil
	case keys["prompt"] != nil:
		return FormatPrompt, nil
	}
	return "", fmt.Errorf("line 1 has none of \"prompt\", \"messages\" or \"conversations\"; expected %s", formatHelp)
}

// parseJSONL reads prompt or chat lines.
func parseJSONL(r io.Reader, format DatasetFormat) ([]DatasetEntry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	var out []DatasetEntry
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var v struct {
			Prompt    *string         `json:"prompt"`
			Messages  []Message       `json:"messages"`
			MaxTokens *int            `json:"max_tokens"`
			Convs     json.RawMessage `json:"conversations"`
		}
		if err := json.Unmarshal(text, &v); err != nil {
			return nil, fmt.Errorf("line %d: %v (expected %s)", line, err, formatHelp)
		}
		e := DatasetEntry{Line: line}
		switch {
		case v.Convs != nil:
			conv, err := shareGPTEntry(v.Convs, line)
			if err != nil {
				return nil, err
			}
			if conv != nil {
				out = append(out, *conv)
			}
			continue
		case format == FormatChat:
			if len(v.Messages) == 0 {
				return nil, fmt.Errorf("line %d: missing \"messages\" (a chat line is {\"messages\": [{\"role\": ..., \"content\": ...}]})", line)
			}
			for i, m := range v.Messages {
				switch m.Role {
				case "system", "user", "assistant", "developer", "tool":
				default:
					return nil, fmt.Errorf("line %d: messages[%d] has role %q (want system, user, assistant, developer or tool)", line, i, m.Role)
				}
			}
			e.Messages = v.Messages
		default:
			if v.Prompt == nil || *v.Prompt == "" {
				return nil, fmt.Errorf("line %d: missing \"prompt\" (a prompt line is {\"prompt\": \"...\", \"max_tokens\": N})", line)
			}
			e.Messages = []Message{{Role: "user", Content: *v.Prompt}}
		}
		if v.MaxTokens != nil {
			if *v.MaxTokens < 0 {
				return nil, fmt.Errorf("line %d: max_tokens must not be negative", line)
			}
			e.MaxTokens = *v.MaxTokens
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// shareGPTTurn is one turn of a ShareGPT conversation.
type shareGPTTurn struct {
	From  string `json:"from"`
	Value string `json:"value"`
}

// parseShareGPT reads a JSON array of conversations, one at a time, so a
// file of hundreds of megabytes is never held twice.
func parseShareGPT(r io.Reader) ([]DatasetEntry, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON (%v); expected %s", err, formatHelp)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("a ShareGPT file is a JSON array; expected %s", formatHelp)
	}
	var out []DatasetEntry
	for i := 1; dec.More(); i++ {
		var rec struct {
			Conversations json.RawMessage `json:"conversations"`
		}
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("entry %d: %v (expected %s)", i, err, formatHelp)
		}
		e, err := shareGPTEntry(rec.Conversations, i)
		if err != nil {
			return nil, err
		}
		if e != nil {
			out = append(out, *e)
		}
	}
	return out, nil
}

// shareGPTEntry takes a conversation's first human turn as the prompt and
// the answer after it as the reference, as vLLM's benchmark does.
// Conversations with fewer than two turns are skipped (nil, as vLLM skips
// them).
func shareGPTEntry(raw json.RawMessage, n int) (*DatasetEntry, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("entry %d: missing \"conversations\" (expected %s)", n, formatHelp)
	}
	var turns []shareGPTTurn
	if err := json.Unmarshal(raw, &turns); err != nil {
		return nil, fmt.Errorf("entry %d: \"conversations\" must be an array of {\"from\", \"value\"}: %v", n, err)
	}
	if len(turns) < 2 || turns[0].Value == "" {
		return nil, nil
	}
	return &DatasetEntry{Messages: []Message{{Role: "user", Content: turns[0].Value}}, Reference: turns[1].Value, Line: n}, nil
}

// TokenCounter counts the tokens of a text as the served model does.
type TokenCounter interface {
	Count(text string) int
}

// Filters are the length bounds a dataset's entries must meet, as vLLM's
// benchmark applies them (min 4 tokens of prompt and of output, prompts
// of at most 1,024 tokens, prompt plus output at most 2,048, for
// ShareGPT). Zero leaves a bound out.
type Filters struct {
	MinTokens, MaxPromptTokens, MaxContext int
}

// ShareGPTFilters are vLLM's defaults for ShareGPT.
var ShareGPTFilters = Filters{MinTokens: 4, MaxPromptTokens: 1024, MaxContext: 2048}

// Size counts every entry's input tokens (and a reference answer's output
// tokens) with count, then keeps the entries that pass f. defaultOutput
// sizes entries without a reference or max_tokens for the context bound.
// It returns the kept entries and how many were dropped.
func Size(entries []DatasetEntry, count TokenCounter, f Filters, defaultOutput int) ([]DatasetEntry, int) {
	kept := entries[:0:0]
	for _, e := range entries {
		in := 0
		for _, m := range e.Messages {
			in += count.Count(m.Content)
		}
		out := e.MaxTokens
		if e.Reference != "" {
			out = count.Count(e.Reference)
		}
		if out == 0 {
			out = defaultOutput
		}
		e.InputTokens, e.OutputTokens = in, out
		if f.MinTokens > 0 && (in < f.MinTokens || (e.Reference != "" && out < f.MinTokens)) {
			continue
		}
		if f.MaxPromptTokens > 0 && in > f.MaxPromptTokens {
			continue
		}
		if f.MaxContext > 0 && in+out > f.MaxContext {
			continue
		}
		kept = append(kept, e)
	}
	return kept, len(entries) - len(kept)
}

// Sample shuffles entries with the seed and keeps n of them (all when n is
// 0 or more than there are), as vLLM's benchmark samples --num-prompts.
func Sample(entries []DatasetEntry, n int, seed uint64) []DatasetEntry {
	out := append([]DatasetEntry(nil), entries...)
	r := rand.New(rand.NewPCG(seed, 0xda7a5e7))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	if n > 0 && n < len(out) {
		out = out[:n]
	}
	return out
}

// Dataset cycles through entries.
type Dataset struct {
	Entries          []DatasetEntry
	DefaultMaxTokens int
}

// Request implements Source. A ShareGPT entry asks for its reference
// answer's length with ignore_eos, so every run generates what the
// recorded conversation did.
func (d Dataset) Request(i int) Request {
	e := d.Entries[i%len(d.Entries)]
	req := Request{Messages: e.Messages, MaxTokens: e.MaxTokens}
	if e.Reference != "" && e.OutputTokens > 0 {
		req.MaxTokens, req.IgnoreEOS = e.OutputTokens, true
	}
	if req.MaxTokens <= 0 {
		req.MaxTokens = d.DefaultMaxTokens
	}
	return req
}

// WordCounter counts whitespace-separated words: the sizing of last resort
// when neither a tokenizer nor the server can count.
type WordCounter struct{}

// Count implements TokenCounter.
func (WordCounter) Count(text string) int { return len(strings.Fields(text)) }
