package transport

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/kneebench/knee/health/quiet"
)

// vllmChunk is one chat.completion.chunk event as vLLM's OpenAI server
// writes it (serving_chat.py: the delta, logprobs null, finish_reason).
func vllmChunk(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = fmt.Sprintf("%q", finish)
	}
	return fmt.Sprintf(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]}`+"\n\n", delta, f)
}

// vllmUsage is the final usage event of a stream with include_usage.
func vllmUsage(prompt, completion, reasoning int) string {
	details := ""
	if reasoning >= 0 {
		details = fmt.Sprintf(`,"completion_tokens_details":{"reasoning_tokens":%d}`, reasoning)
	}
	return fmt.Sprintf(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d%s}}`+"\n\n",
		prompt, prompt+completion, completion, details)
}

// stream joins its parts into one list of events.
func stream(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func deltas(field string, pieces ...string) []string {
	var out []string
	for _, p := range pieces {
		out = append(out, vllmChunk(fmt.Sprintf(`{%q:%q}`, field, p), ""))
	}
	return out
}

// TestReasoningReadRight: the forms servers stream reasoning in, each
// read to the time of the first answer token (its chunk's index), the
// reasoning and answer counts, and whether the answer came at all.
func TestReasoningReadRight(t *testing.T) {
	quiet.Wire(t, func() { testReasoningReadRight(t) })
}

func testReasoningReadRight(t *testing.T) {
	role := vllmChunk(`{"role":"assistant","content":""}`, "")
	cases := []struct {
		name          string
		events        []string
		firstAnswerAt int // chunk index of the first answer token; -1 none
		reasoningTok  int // ThoughtTokens
		reported      bool
		answerTok     int
		noAnswer      bool
		finishLength  bool
	}{
		{"vLLM reasoning_content, usage with reasoning_tokens",
			stream([]string{role}, deltas("reasoning_content", "Let", " me", " think"), deltas("content", "Four", "."),
				[]string{vllmChunk(`{}`, "stop"), vllmUsage(12, 5, 3), "data: [DONE]\n\n"}),
			3, 3, true, 2, false, false},
		{"newer vLLM reasoning, usage without details: counted from the stream",
			stream([]string{role}, deltas("reasoning", "Hmm", ",", " ok"), deltas("content", "Yes"),
				[]string{vllmChunk(`{}`, "stop"), vllmUsage(12, 4, -1), "data: [DONE]\n\n"}),
			3, 3, false, 1, false, false},
		{"the budget spent on thought: no answer, finish length",
			stream([]string{role}, deltas("reasoning_content", "a", "b", "c", "d"),
				[]string{vllmChunk(`{"reasoning_content":"e"}`, "length"), vllmUsage(12, 5, 5), "data: [DONE]\n\n"}),
			-1, 5, true, 0, true, true},
		{"think tags in content (no reasoning parser)",
			stream([]string{role}, deltas("content", "<think>", "\nwhy", " so", "</think>", "\n\n", "Because", " so"),
				[]string{vllmUsage(9, 7, -1), "data: [DONE]\n\n"}),
			5, 4, false, 3, false, false},
		{"think tags in content beside a usage of 0 reasoning tokens (SGLang without a reasoning parser)",
			stream([]string{role}, deltas("content", "<think>", "\nwhy", " so", "</think>", "\n\n", "Because", " so"),
				[]string{vllmUsage(9, 7, 0), "data: [DONE]\n\n"}),
			5, 4, true, 3, false, false},
		{"DeepSeek-R1: the prompt opened the tag, only its close streams",
			stream([]string{role}, deltas("content", "First", " thought", "</think>", "Answer"),
				[]string{vllmUsage(9, 4, -1), "data: [DONE]\n\n"}),
			3, 3, false, 1, false, false},
		{"gpt-oss harmony channels in content",
			stream([]string{role}, deltas("content", "<|channel|>analysis<|message|>Think", " more", "<|end|><|start|>assistant<|channel|>final<|message|>", "Done"),
				[]string{vllmUsage(9, 4, -1), "data: [DONE]\n\n"}),
			3, 3, false, 1, false, false},
		{"no reasoning at all",
			stream([]string{role}, deltas("content", "Just", " text"), []string{vllmUsage(9, 2, -1), "data: [DONE]\n\n"}),
			0, 0, false, 2, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := doOne(t, oddServer(t, sse(c.events...)))
			if rec.Class != "" {
				t.Fatalf("class %q: %s", rec.Class, rec.Message)
			}
			at := -1
			for i, ct := range rec.ChunkTimes {
				if ct == rec.FirstAnswer && rec.FirstAnswer > 0 {
					at = i
					break
				}
			}
			if at != c.firstAnswerAt || rec.ThoughtTokens() != c.reasoningTok || rec.ReasoningReported != c.reported ||
				rec.AnswerTokens() != c.answerTok || rec.NoAnswer() != c.noAnswer || rec.FinishLength != c.finishLength {
				t.Errorf("first answer at chunk %d, %d reasoning tokens (reported %v), %d answer, no answer %v, length %v;\nwant %d, %d (%v), %d, %v, %v (chunks %d: %d reasoning, %d answer)",
					at, rec.ThoughtTokens(), rec.ReasoningReported, rec.AnswerTokens(), rec.NoAnswer(), rec.FinishLength,
					c.firstAnswerAt, c.reasoningTok, c.reported, c.answerTok, c.noAnswer, c.finishLength, rec.Chunks, rec.ReasoningChunks, rec.AnswerChunks)
			}
		})
	}
}

// TestThinkTagsInPieces: a real llama-server whose model has no token
// for <think> streams the tags in pieces ("<", "th", "i", "n", "k",
// ">"); the pieces are held until the tag is whole, and booked as
// thought (captured from the recipe's tiny model, its output held to
// "<think>…</think>…" by a grammar, no reasoning parser on).
func TestThinkTagsInPieces(t *testing.T) {
	quiet.Wire(t, func() { testThinkTagsInPieces(t) })
}

func testThinkTagsInPieces(t *testing.T) {
	raw, err := os.ReadFile("testdata/llama-cpp-split-think.sse")
	if err != nil {
		t.Fatal(err)
	}
	rec := doOne(t, oddServer(t, sse(string(raw))))
	at := slices.Index(rec.ChunkTimes, rec.FirstAnswer)
	if rec.Class != "" || rec.Chunks != 30 || rec.ReasoningChunks != 20 || rec.AnswerChunks != 10 || at != 20 {
		t.Errorf("class %q, %d chunks: %d reasoning, %d answer, first answer at %d; want 30: 20, 10, at 20",
			rec.Class, rec.Chunks, rec.ReasoningChunks, rec.AnswerChunks, at)
	}
	// DeepSeek-R1's way, from a template that opens <think> in the
	// prompt: only the close streams, in pieces; what came before it was
	// thought.
	if raw, err = os.ReadFile("testdata/llama-cpp-r1-close.sse"); err != nil {
		t.Fatal(err)
	}
	rec = doOne(t, oddServer(t, sse(string(raw))))
	at = slices.Index(rec.ChunkTimes, rec.FirstAnswer)
	if rec.Class != "" || rec.Chunks != 25 || rec.ReasoningChunks != 16 || rec.AnswerChunks != 9 || at != 16 {
		t.Errorf("R1 close in pieces: class %q, %d chunks: %d reasoning, %d answer, first answer at %d; want 25: 16, 9, at 16",
			rec.Class, rec.Chunks, rec.ReasoningChunks, rec.AnswerChunks, at)
	}
	// A "<" that starts no tag is answer, from its own chunk on.
	rec = doOne(t, oddServer(t, sse(stream(deltas("content", "a", "<", "b", "c"), []string{vllmUsage(3, 4, -1), "data: [DONE]\n\n"})...)))
	if rec.AnswerChunks != 4 || rec.ReasoningChunks != 0 || rec.FirstAnswer != rec.ChunkTimes[0] {
		t.Errorf("a lone '<': %d answer, %d reasoning chunks", rec.AnswerChunks, rec.ReasoningChunks)
	}
	// A stream that ends inside a tag's pieces books them.
	rec = doOne(t, oddServer(t, sse(stream(deltas("content", "x", "<th"), []string{"data: [DONE]\n\n"})...)))
	if rec.AnswerChunks != 2 {
		t.Errorf("ended on a tag's start: %d answer chunks, want 2", rec.AnswerChunks)
	}
}
