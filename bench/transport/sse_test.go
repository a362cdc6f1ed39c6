package transport

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestScanChunk(t *testing.T) {
	cases := []struct {
		name    string
		payload string
		want    chunk
	}{
		{"role only", `{"choices":[{"delta":{"role":"assistant","content":""}}]}`, chunk{}},
		{"content", `{"choices":[{"delta":{"content":"Hi"},"finish_reason":null}]}`, chunk{content: true}},
		{"content null", `{"choices":[{"delta":{"content":null}}]}`, chunk{}},
		{"reasoning", `{"choices":[{"delta":{"reasoning_content":"hmm"}}]}`, chunk{content: true}},
		{"completion text", `{"choices":[{"text":" a","index":0}]}`, chunk{content: true}},
		{"escaped quote inside content", `{"choices":[{"delta":{"content":"say \"content\": \"\""}}]}`, chunk{content: true}},
		{"finish", `{"choices":[{"delta":{},"finish_reason":"stop"}]}`, chunk{finished: true}},
		{"usage", `{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17,"prompt_tokens_details":{"cached_tokens":8}}}`,
			chunk{usage: true, promptTokens: 12, outTokens: 5, cachedTokens: 8, cachedSeen: true}},
		{"usage null", `{"choices":[{"delta":{"content":"x"}}],"usage":null}`, chunk{content: true}},
		{"usage without cache", `{"usage": {"prompt_tokens": 3, "completion_tokens": 1}}`, chunk{usage: true, promptTokens: 3, outTokens: 1}},
		{"error", `{"error":{"message":"overloaded","type":"server_error"}}`, chunk{hasError: true}},
	}
	for _, tc := range cases {
		var got chunk
		scanChunk([]byte(tc.payload), &got)
		if !reflect.DeepEqual(got.base(), tc.want) {
			t.Errorf("%s: scanChunk(%s) = %+v, want %+v", tc.name, tc.payload, got, tc.want)
		}
	}
}

// TestScanChunkReasoning: what a chunk says of reasoning, apart from the
// rest.
func TestScanChunkReasoning(t *testing.T) {
	cases := []struct {
		payload                   string
		reasoning, answer, length bool
		raw                       string
		tokens                    int
		seen                      bool
	}{
		{`{"choices":[{"delta":{"reasoning_content":"hmm"}}]}`, true, false, false, "", 0, false},
		{`{"choices":[{"delta":{"reasoning":"hmm"}}]}`, true, false, false, "", 0, false},
		{`{"choices":[{"delta":{"reasoning":""}}]}`, false, false, false, "", 0, false},
		{`{"reasoning":{"effort":"low"}}`, false, false, false, "", 0, false},
		{`{"choices":[{"delta":{"content":"a \"q\" <think>"}}]}`, false, true, false, `a \"q\" <think>`, 0, false},
		{`{"choices":[{"delta":{},"finish_reason":"length"}]}`, false, false, true, "", 0, false},
		{`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":7}}}`, false, false, false, "", 7, true},
	}
	for _, tc := range cases {
		var c chunk
		scanChunk([]byte(tc.payload), &c)
		if c.reasoning != tc.reasoning || c.answer != tc.answer || c.finishLength != tc.length || string(stringValue(c.answerTail)) != tc.raw ||
			c.reasoningTokens != tc.tokens || c.reasoningSeen != tc.seen {
			t.Errorf("scanChunk(%s) = %+v", tc.payload, c)
		}
	}
}

func TestLineReader(t *testing.T) {
	in := "data: a\r\n\ndata: " + strings.Repeat("b", 100_000) + "\nlast"
	lr := newLineReader(strings.NewReader(in), 4096)
	var got []string
	for {
		line, err := lr.next()
		if err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
		got = append(got, string(line))
	}
	if len(got) != 4 || got[0] != "data: a" || got[1] != "" || len(got[2]) != 100_006 || got[3] != "last" {
		t.Errorf("lines = %d %q...", len(got), got[0])
	}
	lr = newLineReader(bytes.NewReader(bytes.Repeat([]byte("x"), 2*maxEventBytes)), 4096)
	if _, err := lr.next(); err != errEventTooLarge {
		t.Errorf("endless line: err = %v, want errEventTooLarge", err)
	}
}

func TestAppendContent(t *testing.T) {
	got := appendContent(nil, []byte(`{"choices":[{"delta":{"content":"a \"b\"\n"}}]}`))
	if string(got) != "a \"b\"\n" {
		t.Errorf("appendContent = %q", got)
	}
}

// FuzzSSE feeds arbitrary bytes through the line reader and the chunk
// scanner: nothing may panic, hang, or return a line over the bound.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"usage\":{\"prompt_tokens\":99999999999999999999,\"completion_tokens\":-1}}\n"))
	f.Add([]byte("data: {\"content\":\"\\\"\n\r\n:comment\nevent: x\n"))
	f.Add([]byte("data: {\"error\":{\"message\":\"x\"}}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		lr := newLineReader(bytes.NewReader(in), 64)
		var c chunk
		for i := 0; i < len(in)+2; i++ {
			line, err := lr.next()
			if err != nil {
				return
			}
			if len(line) > maxEventBytes {
				t.Fatalf("line of %d bytes", len(line))
			}
			if p, ok := dataPayload(line); ok {
				scanChunk(p, &c)
				_ = appendContent(nil, p)
				if c.promptTokens < 0 || c.outTokens < 0 || c.cachedTokens < 0 {
					t.Fatalf("negative count %+v", c)
				}
			}
		}
	})
}

// base is c without what it says of reasoning (the fields the reference
// scanner of the tests knows).
func (c chunk) base() chunk {
	c.reasoning, c.answer, c.answerTail, c.reasoningTokens, c.reasoningSeen, c.finishLength = false, false, nil, 0, false, false
	c.reasoningTail = nil
	c.tool, c.finishTool, c.toolItem = false, false, false
	return c
}
