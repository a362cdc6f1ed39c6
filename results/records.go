package results

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// RecordLine is one request as --records writes it: one JSON object per
// line. Every time is in nanoseconds: instants as Unix time (so records of
// several processes line up), durations as plain counts. Durations a
// request does not have (no first token) are absent.
type RecordLine struct {
	// Level is the sweep level's load (rate or concurrency); absent for a
	// plain run.
	Level *float64 `json:"level,omitempty"`
	// Repeat is the repeat (from 1) of a level or run measured several
	// times (--repeat); absent otherwise.
	Repeat int `json:"repeat,omitempty"`
	Index  int `json:"index"`
	// Warmup marks unmeasured requests (and a call's warm-up turn).
	Warmup bool `json:"warmup,omitempty"`
	// Turn is the request's turn within its call (voice workload), and
	// Call the call's index in the run's one schedule.
	Turn int  `json:"turn,omitempty"`
	Call *int `json:"call,omitempty"`

	ScheduledUnixNs  int64 `json:"scheduled_unix_ns"`
	SentUnixNs       int64 `json:"sent_unix_ns"`
	FirstTokenUnixNs int64 `json:"first_token_unix_ns,omitempty"`
	LastTokenUnixNs  int64 `json:"last_token_unix_ns,omitempty"`
	DoneUnixNs       int64 `json:"done_unix_ns"`

	TTFTNs      *int64 `json:"ttft_ns,omitempty"`
	TTFTSchedNs *int64 `json:"ttft_sched_ns,omitempty"`
	E2ENs       *int64 `json:"e2e_ns,omitempty"`
	// TTFATNs is the time to the first answer token (not reasoning), for
	// a request that reasoned and answered; ReasoningTokens and
	// AnswerTokens split its output tokens, for one that reasoned.
	TTFATNs         *int64 `json:"ttfat_ns,omitempty"`
	ReasoningTokens *int   `json:"reasoning_tokens,omitempty"`
	AnswerTokens    *int   `json:"answer_tokens,omitempty"`
	// Class is the request's class in a mix: 1 for the mix file's
	// first, and so on (absent without a mix).
	Class int `json:"class,omitempty"`
	// UploadNs is from the send to the body's last byte handed to the
	// socket (connecting included, for a new connection).
	UploadNs *int64 `json:"upload_ns,omitempty"`
	// ToolChunks is the chunks that carried a tool call.
	ToolChunks int    `json:"tool_chunks,omitempty"`
	E2ESchedNs *int64 `json:"e2e_sched_ns,omitempty"`
	// QueueWaitNs is scheduled → sent; LatenessNs the dispatcher's own
	// part of it (not counting a wait for a concurrency slot).
	QueueWaitNs int64 `json:"queue_wait_ns"`
	LatenessNs  int64 `json:"lateness_ns"`
	WaitedSlot  bool  `json:"waited_for_slot,omitempty"`

	Status  int    `json:"status"`
	Error   string `json:"error,omitempty"`
	Message string `json:"message,omitempty"`

	Chunks int `json:"chunks"`
	// PromptTokens is absent for a request that failed before the server
	// said how long its prompt was.
	PromptTokens     *int `json:"prompt_tokens,omitempty"`
	CompletionTokens int  `json:"completion_tokens"`
	OutputTokens     int  `json:"output_tokens"`
	CachedTokens     int  `json:"cached_tokens"`
	UsageReported    bool `json:"usage_reported"`
	CachedReported   bool `json:"cached_reported"`

	Attempts          int    `json:"attempts,omitempty"`
	FirstAttemptError string `json:"first_attempt_error,omitempty"`
	Resent            bool   `json:"resent,omitempty"`

	// ChunkUnixNs is when each content chunk arrived.
	ChunkUnixNs []int64 `json:"chunk_unix_ns"`
}

// ReadRecords reads a --records file, line by line; an error names the
// line.
func ReadRecords(r io.Reader) ([]RecordLine, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxRecordLine)
	var out []RecordLine
	line := 1
	for ; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var rl RecordLine
		if err := json.Unmarshal(sc.Bytes(), &rl); err != nil {
			return nil, fmt.Errorf("records line %d: %v", line, err)
		}
		out = append(out, rl)
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return nil, fmt.Errorf("records line %d runs past %d MiB: not a --records file", line, maxRecordLine>>20)
	}
	return out, sc.Err()
}

// maxRecordLine bounds one line of a --records file: a request's line
// holds its chunks' times, some 20 bytes a token.
const maxRecordLine = 64 << 20
