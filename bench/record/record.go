// Package record is what one request measured: its times, status, error
// class and token counts (Record), and the --records line it is written
// as (Writer). Every room of the client side speaks it: the transport
// fills a record, the driver opens and closes it, the summariser reads it.
package record

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"sync"
	"time"

	"github.com/kneebench/knee/results"
)

// Error classes. HTTP failures are "http_<status>" followed by the OpenAI
// error type when the body carries one, e.g. "http_429:rate_limit_error".
const (
	ClassConnectRefused    = "connect_refused"
	ClassConnectionReset   = "connection_reset"
	ClassFirstTokenTimeout = "first_token_timeout"
	ClassIdleTimeout       = "idle_timeout"
	ClassRequestTimeout    = "request_timeout"
	ClassTruncated         = "truncated_stream"
	ClassMalformed         = "malformed_stream"
	ClassStreamError       = "stream_error"
	ClassNotStreamed       = "not_streamed"
	ClassClientSaturated   = "client_saturated"
	ClassInterrupted       = "interrupted"
	ClassOther             = "other"
)

// Record is everything measured about one request. Times are offsets from
// the start of the run on the monotonic clock. It is never encoded itself:
// --records writes its results.RecordLine (see Record.line).
type Record struct {
	Index     int
	Warmup    bool
	Tag       int
	Scheduled time.Duration
	// Origin is when the request's call arrived, and Call its index
	// (voice turns only: Tag > 0).
	Origin time.Duration
	// Paused is how long the call's caller paused before this turn (the
	// gaps since the call's arrival): the saturation tests take it out,
	// as it is the caller's time and spreads a turn's age by seconds.
	Paused     time.Duration
	Call       int
	Sent       time.Duration
	FirstToken time.Duration
	LastToken  time.Duration
	Done       time.Duration
	// Lateness is how late the dispatcher sent the request against its
	// schedule, not counting a wait for a concurrency slot.
	Lateness         time.Duration
	Waited           bool
	Status           int
	Class            string
	Message          string
	Chunks           int
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int
	UsageReported    bool
	// UsageOdd is set when usage.completion_tokens was negative or not a
	// number; with one above MaxTokens (the max_tokens asked) the chunk
	// count is used instead as well.
	UsageOdd bool
	// NoDone is set when the stream closed after a finish_reason but
	// without its data: [DONE].
	NoDone bool
	// PromptOdd is the usage.prompt_tokens the server wrote when no
	// request has that many (negative, not a number, past ten million):
	// PromptTokens is then 0, and the run says so.
	PromptOdd string
	MaxTokens int
	// IgnoreEOS says the request asked for its whole MaxTokens
	// (ignore_eos true): an answer that ends sooner had it ignored.
	IgnoreEOS      bool
	CachedReported bool
	Attempts       int
	RetryAfter     time.Duration
	FirstClass     string
	// Resent is true when the request went out a second time because the
	// server had closed the kept-alive connection it was first sent on.
	Resent bool
	// Timings is llama.cpp's own account of the request, when it sent one.
	Timings *Timings
	// CachedFromTimings says that CachedTokens came from llama.cpp's
	// timings.cache_n, the server having sent no cached_tokens in usage.
	CachedFromTimings bool
	ChunkTimes        []time.Duration
	// PrefixShare is the share of the prompt that an earlier measured
	// request of the run sent first: what a cache that kept everything
	// would hit.
	PrefixShare float32
	// FirstAnswer is when the first answer content came (not reasoning:
	// reasoning_content, reasoning, or text inside think tags); 0 when no
	// answer came. ReasoningChunks and AnswerChunks split Chunks so.
	FirstAnswer                   time.Duration
	ReasoningChunks, AnswerChunks int
	// ReasoningText and AnswerText are the bytes of text each part
	// streamed, read once a stream has reasoned: what a server's one
	// completion count is split by when its events packed several tokens
	// (ThoughtTokens).
	ReasoningText, AnswerText int
	// ReasoningRaw and AnswerRaw are each part's text as it streamed
	// (JSON-escaped), kept only when a tokenizer will count them; then
	// ReasoningText and AnswerText are their tokens (PartsTokenized) and
	// the two are let go.
	ReasoningRaw, AnswerRaw []byte
	PartsTokenized          bool
	// ReasoningTokens is usage.completion_tokens_details.reasoning_tokens,
	// when ReasoningReported.
	ReasoningTokens   int
	ReasoningReported bool
	// FinishLength says the answer ended at max_tokens (finish_reason
	// "length").
	FinishLength bool
	// ToolChunks counts the chunks that carried a tool call (its name or
	// a piece of its arguments); ToolFinish says finish_reason was
	// "tool_calls".
	ToolChunks int
	ToolFinish bool
	// ResponseID is the Responses API's id for the answer, kept with Text
	// (a later turn may name it as previous_response_id).
	ResponseID string
	// Images and ImageBytes are the images the request sent and their
	// data URLs' bytes; BodyBytes is its whole body's.
	Images, ImageBytes, BodyBytes int
	// MixClass is the request's class in a mix (1-based; 0: no mix).
	MixClass int
	// Upload is from the send to the request's last byte handed to the
	// socket: connecting, if the request opened a connection, and
	// writing its body. Part of TTFT, as the server can start on a
	// prompt only once it has the whole body.
	Upload time.Duration
	// Pooled marks a pooling model's answer (embeddings): one body, no
	// tokens generated; Inputs is how many texts the request carried and
	// Dimensions the vectors' size.
	Pooled     bool
	Inputs     int
	Dimensions int
	// ToolCalls are the calls the answer made, kept with Text.
	ToolCalls []ToolCall
	// Text is the generated text, kept only when the workload needs it
	// (a multi-turn call carries answers forward).
	Text []byte
}

// ToolCall is a call an answer made: the server's id for it, the
// function and its arguments (JSON text). It converts to
// workload.ToolCall, for a call's next turn.
type ToolCall struct {
	ID, Name, Arguments string
}

// Timings is llama.cpp's per-response timing object: prompt tokens reused
// from its cache, and the milliseconds it spent on the prompt and on
// generating PredictedN tokens.
type Timings struct {
	CacheN      int     `json:"cache_n"`
	PromptMs    float64 `json:"prompt_ms"`
	PredictedMs float64 `json:"predicted_ms"`
	PredictedN  int     `json:"predicted_n"`
}

// OK reports whether the request succeeded.
func (r *Record) OK() bool { return r.Class == "" }

// OutputTokens is the server's completion token count when it reported
// usage, else the number of content chunks.
func (r *Record) OutputTokens() int {
	if r.Pooled {
		return 0
	}
	if r.UsageReported && r.CompletionTokens > 0 && !r.UsageImplausible() {
		return r.CompletionTokens
	}
	return r.Chunks
}

// usageImplausible reports a completion count the server cannot have
// meant: negative or not a number, or above the max_tokens asked.
func (r *Record) UsageImplausible() bool {
	return r.UsageOdd || (r.MaxTokens > 0 && r.CompletionTokens > r.MaxTokens)
}

// Reasoned reports whether the request reasoned (streamed reasoning, or
// its usage counted some).
func (r *Record) Reasoned() bool {
	return r.ReasoningChunks > 0 || r.ReasoningReported && r.ReasoningTokens > 0
}

// ThoughtTokens is the request's reasoning tokens: the server's count
// when it reported one; else its reasoning chunks when every chunk was
// one token; else all its output when no answer text came; else its
// output split by the text each part streamed (ThoughtCounted says
// which).
func (r *Record) ThoughtTokens() int {
	n, _ := r.thought()
	return n
}

// ThoughtCounted says how ThoughtTokens counted: "usage", "stream" (a
// token a chunk), "no answer", "text" (apportioned by each part's word
// pieces) or "tokenizer" (by each part's tokens).
func (r *Record) ThoughtCounted() string {
	_, how := r.thought()
	return how
}

func (r *Record) thought() (int, string) {
	out := r.OutputTokens()
	switch {
	case r.ReasoningReported && (r.ReasoningTokens > 0 || r.ReasoningChunks == 0):
		// A server that parses no reasoning may still report 0 while its
		// thought streams in think tags: the stream counts it then.
		return r.ReasoningTokens, "usage"
	case r.FirstAnswer == 0 && r.ReasoningChunks > 0:
		// Never an answer token where no answer text came.
		return max(out, r.ReasoningChunks), "no answer"
	case r.ReasoningChunks+r.AnswerChunks == out || r.ReasoningText+r.AnswerText == 0 || r.AnswerText == 0:
		return r.ReasoningChunks, "stream"
	}
	how := "text"
	if r.PartsTokenized {
		how = "tokenizer"
	}
	share := float64(r.ReasoningText) / float64(r.ReasoningText+r.AnswerText)
	return min(max(int(math.Round(share*float64(out))), r.ReasoningChunks), out-r.AnswerChunks), how
}

// AnswerTokens is its output tokens that were not reasoning.
func (r *Record) AnswerTokens() int { return max(r.OutputTokens()-r.ThoughtTokens(), 0) }

// CalledTool reports whether the request answered with a tool call.
func (r *Record) CalledTool() bool { return r.ToolChunks > 0 || r.ToolFinish }

// NoAnswer reports a request that reasoned and never answered: its
// budget (max_tokens) spent on thought when FinishLength.
func (r *Record) NoAnswer() bool { return r.OK() && r.Reasoned() && r.FirstAnswer == 0 }

// Reset clears r for reuse, keeping its slices' capacity.
func (r *Record) Reset() {
	ct := r.ChunkTimes[:0]
	txt := r.Text[:0]
	*r = Record{ChunkTimes: ct, Text: txt}
}

// Writer serialises records from many goroutines into one buffered
// writer, one results.RecordLine per record; a nil Writer writes nothing.
type Writer struct {
	mu    sync.Mutex
	bw    *bufio.Writer
	start time.Time
	level *float64
	// Repeat, when set, is written on every line (results.RecordLine).
	Repeat int
}

// NewWriter writes to w the records of a run that started at start (their
// times are offsets from it), each with level as its level when set; it
// is nil when w is.
func NewWriter(w io.Writer, start time.Time, level *float64) *Writer {
	if w == nil {
		return nil
	}
	return &Writer{bw: bufio.NewWriterSize(w, 256*1024), start: start, level: level}
}

// Write writes r's line.
func (rw *Writer) Write(r *Record) {
	if rw == nil {
		return
	}
	l := r.line(rw.start, rw.level)
	l.Repeat = rw.Repeat
	line, err := json.Marshal(l)
	if err != nil {
		return
	}
	rw.mu.Lock()
	_, _ = rw.bw.Write(append(line, '\n'))
	rw.mu.Unlock()
}

// Flush writes out what is buffered.
func (rw *Writer) Flush() {
	if rw == nil {
		return
	}
	rw.mu.Lock()
	_ = rw.bw.Flush()
	rw.mu.Unlock()
}

// line is the record as --records writes it (see results.RecordLine), with
// times made absolute from the run's start.
func (r *Record) line(start time.Time, level *float64) results.RecordLine {
	abs := func(d time.Duration) int64 { return start.Add(d).UnixNano() }
	dur := func(d time.Duration) *int64 { v := int64(d); return &v }
	l := results.RecordLine{
		Level: level, Index: r.Index, Warmup: r.Warmup, Turn: r.Tag,
		ScheduledUnixNs: abs(r.Scheduled), SentUnixNs: abs(r.Sent), DoneUnixNs: abs(r.Done),
		QueueWaitNs: int64(r.Sent - r.Scheduled), LatenessNs: int64(r.Lateness), WaitedSlot: r.Waited,
		Status: r.Status, Error: r.Class, Message: r.Message,
		Chunks: r.Chunks, CompletionTokens: r.CompletionTokens, OutputTokens: r.OutputTokens(),
		CachedTokens: r.CachedTokens, UsageReported: r.UsageReported, CachedReported: r.CachedReported,
		Attempts: r.Attempts, FirstAttemptError: r.FirstClass, Resent: r.Resent,
		ChunkUnixNs: make([]int64, len(r.ChunkTimes)),
	}
	for i, t := range r.ChunkTimes {
		l.ChunkUnixNs[i] = abs(t)
	}
	if r.Class == "" || r.UsageReported {
		n := r.PromptTokens
		l.PromptTokens = &n
	}
	if r.Tag > 0 {
		call := r.Call
		l.Call = &call
	}
	l.ToolChunks, l.Class = r.ToolChunks, r.MixClass
	if r.Upload > 0 {
		l.UploadNs = dur(r.Upload)
	}
	if r.Reasoned() {
		rt, at := r.ThoughtTokens(), r.AnswerTokens()
		l.ReasoningTokens, l.AnswerTokens = &rt, &at
		if r.FirstAnswer > 0 {
			l.TTFATNs = dur(r.FirstAnswer - r.Sent)
		}
	}
	if r.Chunks > 0 {
		l.FirstTokenUnixNs, l.LastTokenUnixNs = abs(r.FirstToken), abs(r.LastToken)
		l.TTFTNs, l.TTFTSchedNs = dur(r.FirstToken-r.Sent), dur(r.FirstToken-r.Scheduled)
		l.E2ENs, l.E2ESchedNs = dur(r.LastToken-r.Sent), dur(r.LastToken-r.Scheduled)
	}
	return l
}

// Time is the record's time a latency of the metric table reads
// (results.Field), and whether it has one: a request that streamed
// nothing has no TTFT, one without an answer token no TTFAT, one of a
// single token no TPOT.
func (r *Record) Time(f results.Field) (time.Duration, bool) {
	switch f {
	case results.FieldTTFT:
		return r.FirstToken - r.Sent, r.Chunks > 0
	case results.FieldTTFTSched:
		return r.FirstToken - r.Scheduled, r.Chunks > 0
	case results.FieldTTFAT:
		return r.FirstAnswer - r.Sent, r.FirstAnswer != 0
	case results.FieldTTFATSched:
		return r.FirstAnswer - r.Scheduled, r.FirstAnswer != 0
	case results.FieldTPOT:
		if out := r.OutputTokens(); out > 1 && r.Chunks > 0 {
			return (r.LastToken - r.FirstToken) / time.Duration(out-1), true
		}
		return 0, false
	case results.FieldE2E:
		return r.LastToken - r.Sent, r.Chunks > 0
	case results.FieldE2ESched:
		return r.LastToken - r.Scheduled, r.Chunks > 0
	}
	return 0, false
}
