package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// DatasetFormat names a --dataset file's shape.
type DatasetFormat string

// Dataset formats. Auto detects the format from the content.
const (
	FormatAuto     DatasetFormat = "auto"
	FormatPrompt   DatasetFormat = "prompt"   // JSONL of {"prompt": "...", "max_tokens": N} (GuideLLM's too)
	FormatChat     DatasetFormat = "chat"     // JSONL of {"messages": [...], "max_tokens": N}
	FormatShareGPT DatasetFormat = "sharegpt" // JSON array (or JSONL) of {"conversations": [{"from", "value"}, ...]}
	// FormatSingleTurn is AIPerf's single_turn: {"text": "..."} or
	// {"texts": [...]}, with optional output_length, timestamp and delay.
	FormatSingleTurn DatasetFormat = "single_turn"
	// FormatMultiTurn is AIPerf's multi_turn: {"session_id", "turns": [...]}.
	FormatMultiTurn DatasetFormat = "multi_turn"
	// FormatMooncake is a Mooncake trace, as AIPerf reads it: {"timestamp"
	// (ms), "input_length", "output_length", "hash_ids"} or "text_input".
	FormatMooncake DatasetFormat = "mooncake"
	// FormatBFCL is a Berkeley Function Calling Leaderboard line:
	// {"question": [[messages]], "function": [schemas]}, the functions
	// sent as the request's tools.
	FormatBFCL DatasetFormat = "bfcl"
)

// Formats lists the formats a user may name.
var Formats = []DatasetFormat{FormatAuto, FormatPrompt, FormatChat, FormatShareGPT, FormatSingleTurn, FormatMultiTurn, FormatMooncake, FormatBFCL}

// formatHelp describes the accepted formats for error messages.
const formatHelp = `prompt JSONL ({"prompt": "...", "max_tokens": N}), ` +
	`chat JSONL ({"messages": [{"role": "user", "content": "..."}]}), ` +
	`ShareGPT JSON ([{"conversations": [{"from": "human", "value": "..."}, ...]}]), ` +
	`AIPerf single_turn ({"text": "..."}), multi_turn ({"session_id": "...", "turns": [{"text": "..."}]}) ` +
	`a Mooncake trace ({"timestamp": ms, "input_length": N, "output_length": N, "hash_ids": [...]}) ` +
	`or BFCL ({"question": [[{"role": "user", "content": "..."}]], "function": [{"name": ...}]})`

// Bounds on what one line may ask for: past them a file is hostile or
// broken, not a workload.
const (
	maxLineBytes    = 64 << 20
	MaxOutputTokens = 10_000_000
	maxInputLength  = 10_000_000
	maxHashIDs      = 100_000
	maxTimestampMs  = 1e12 // about 31 years
	// maxTimestamp is maxTimestampMs as a duration: delays that add up to
	// more would overflow one.
	maxTimestamp = time.Duration(maxTimestampMs) * time.Millisecond
)

// DatasetEntry is one request of a dataset.
type DatasetEntry struct {
	// Messages are sent as they are (a prompt line is one user message).
	// A trace line that gives only a length has none until Materialize.
	Messages []Message
	// MaxTokens is the entry's own output length; 0 means the run's.
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
	// Timestamp is when a trace line arrives, from the trace's start
	// (Timed says the line had one).
	Timestamp time.Duration
	Timed     bool
	// InputLength is a trace line's prompt size in tokens when it gives
	// no text; HashIDs name its prompt's blocks (equal ids, equal blocks).
	InputLength int
	HashIDs     []int
	// Tools are the functions the entry offers (a BFCL line's).
	Tools []Tool
}

// Conversation is a whole multi-turn exchange, replayed turn by turn.
type Conversation struct {
	ID     string
	System string
	Turns  []ConversationTurn
	Line   int
}

// ConversationTurn is one user turn and what the recording says of it.
type ConversationTurn struct {
	User string
	// Images are the turn's images, as the file names them (see
	// ParsedDataset.ImageRefs).
	Images []string
	// Answer is the recorded assistant answer ("" when there is none), and
	// AnswerTokens its length once counted (SizeConversations).
	Answer       string
	AnswerTokens int
	// MaxTokens is the turn's own output length (0: the answer's length,
	// or the run's).
	MaxTokens int
	// Delay is the think time before the turn, when the file gives one.
	Delay    time.Duration
	HasDelay bool
}

// ParsedDataset is what a dataset file holds.
type ParsedDataset struct {
	Format DatasetFormat
	// Entries are the file's requests: one per line, or a conversation's
	// first turn.
	Entries []DatasetEntry
	// Conversations are the file's whole exchanges, for formats that hold
	// them (ShareGPT, chat, multi_turn).
	Conversations []Conversation
	// LengthKey is the key output lengths came from ("" when no line
	// gave one).
	LengthKey string
	// Timed says the lines carry timestamps: a trace to replay.
	Timed bool
	// Sessions says the file's records are sessions, every turn to be
	// sent (AIPerf's multi_turn, GuideLLM's numbered prompt columns):
	// they replay as conversations, never as their first turns alone.
	Sessions bool
}

// outputKeys are the names the peer tools give a line's output length, in
// the order knee looks for them.
var outputKeys = []string{"max_tokens", "output_tokens_count", "completion_tokens_count", "output_length", "output_tokens"}

// ParseDataset reads a dataset in the given format (FormatAuto detects it
// from the first record's keys). A JSON array holds records of any line
// format. Every error names the line and the formats accepted.
func ParseDataset(r io.Reader, format DatasetFormat) (*ParsedDataset, error) {
	if format == "" {
		format = FormatAuto
	}
	known := false
	for _, f := range Formats {
		known = known || f == format
	}
	if !known {
		return nil, fmt.Errorf("unknown dataset format %q: use %s", format, formatNames())
	}
	br := bufio.NewReaderSize(r, 1<<20)
	skipBOM(br)
	head, _ := br.Peek(1 << 20)
	head = bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 {
		return nil, errors.New("the file is empty")
	}
	p := &ParsedDataset{Format: format}
	var err error
	switch head[0] {
	case '[':
		err = p.parseArray(br)
	case '{':
		err = p.parseLines(br)
	default:
		return nil, fmt.Errorf("line 1 is not JSON; expected %s", formatHelp)
	}
	if err != nil {
		return nil, err
	}
	if len(p.Entries) == 0 && len(p.Conversations) == 0 {
		return nil, fmt.Errorf("no usable entries (expected %s)", formatHelp)
	}
	return p, nil
}

func formatNames() string {
	var s []string
	for _, f := range Formats {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}

// skipBOM drops a UTF-8 byte order mark at the start.
func skipBOM(br *bufio.Reader) {
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte("\ufeff")) {
		br.Discard(3)
	}
}

// parseLines reads JSONL, one record a line, lines of any length up to
// maxLineBytes.
func (p *ParsedDataset) parseLines(br *bufio.Reader) error {
	for line := 1; ; line++ {
		text, err := readLine(br, line)
		if err != nil && err != io.EOF {
			return err
		}
		if t := bytes.TrimSpace(text); len(t) > 0 {
			if perr := p.record(t, line); perr != nil {
				return perr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readLine reads one line, refusing one longer than maxLineBytes.
func readLine(br *bufio.Reader, line int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLineBytes {
			return nil, fmt.Errorf("line %d is longer than %d MiB", line, maxLineBytes>>20)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return buf, err
	}
}

// parseArray reads a JSON array of records one at a time, so a file of
// hundreds of megabytes is never held twice.
func (p *ParsedDataset) parseArray(br *bufio.Reader) error {
	dec := json.NewDecoder(br)
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("not JSON (%v); expected %s", err, formatHelp)
	}
	for i := 1; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("entry %d: %v (expected %s)", i, err, formatHelp)
		}
		if len(raw) > maxLineBytes {
			return fmt.Errorf("entry %d is larger than %d MiB", i, maxLineBytes>>20)
		}
		if err := p.record(raw, i); err != nil {
			return err
		}
	}
	return nil
}

// record reads one record, detecting the format from the first.
func (p *ParsedDataset) record(raw []byte, n int) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return fmt.Errorf("line %d is not a JSON object (%v); expected %s", n, err, formatHelp)
	}
	if p.Format == FormatAuto {
		f, err := detect(keys)
		if err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		p.Format = f
	}
	rec := recordOf{keys: keys, n: n, p: p}
	switch p.Format {
	case FormatPrompt:
		return rec.prompt()
	case FormatChat:
		return rec.chat()
	case FormatShareGPT:
		return rec.shareGPT()
	case FormatSingleTurn:
		return rec.singleTurn()
	case FormatMultiTurn:
		return rec.multiTurn()
	case FormatMooncake:
		return rec.mooncake()
	case FormatBFCL:
		return rec.bfcl()
	}
	return fmt.Errorf("unknown dataset format %q", p.Format)
}

// detect names the format of a record by its keys.
func detect(keys map[string]json.RawMessage) (DatasetFormat, error) {
	has := func(k string) bool { _, ok := keys[k]; return ok }
	switch {
	case has("question") && (has("function") || has("functions") || has("involved_classes")):
		return FormatBFCL, nil
	case has("messages"):
		return FormatChat, nil
	case has("conversations"):
		return FormatShareGPT, nil
	case has("turns"):
		return FormatMultiTurn, nil
	case has("input_length"), has("hash_ids"), has("text_input"):
		return FormatMooncake, nil
	case has("text"), has("texts"):
		return FormatSingleTurn, nil
	case isGuidePrompt(keys):
		return FormatPrompt, nil
	}
	return "", fmt.Errorf(`it has none of "prompt", "messages", "conversations", "text", "turns" or "input_length" (nor GuideLLM's other text columns: %s); expected %s`, strings.Join(guideTexts[1:len(guideTexts)-1], ", "), formatHelp)
}
