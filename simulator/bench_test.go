package simulator

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// BenchmarkMatch4000 matches a 4,000-token prompt against the built-in
// responses, the work done for every request before its plan exists.
func BenchmarkMatch4000(b *testing.B) {
	r, err := LoadResponses("builtin:responses")
	if err != nil {
		b.Fatal(err)
	}
	prompt := strings.Join(fillerTokens(4000, 99), "")
	if n := CountTokens(prompt); n != 4000 {
		b.Fatalf("prompt has %d tokens", n)
	}
	text := strings.TrimSpace(prompt)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := r.match(text, lowerASCII(text))
		if res.entry != nil && res.entry.id != "explain" {
			b.Fatal("unexpected match")
		}
	}
}

// BenchmarkGenerate4000 is the whole content side for a 4,000-token chat
// prompt: counting its tokens, matching, and a 128-token answer.
func BenchmarkGenerate4000(b *testing.B) {
	r, _ := LoadResponses("builtin:bench-responses")
	prompt := strings.Join(fillerTokens(3992, 99), "")
	mt := 128
	g := &GenRequest{Chat: true, Messages: []Message{{Role: "user", Text: prompt}}, MaxTokens: &mt}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Generate(g, 131072); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSSEChunk is the server's per-token formatting: one chunk built
// from the prebuilt envelope and written to a buffered writer.
func BenchmarkSSEChunk(b *testing.B) {
	r := &run{s: &Server{created: 1}, chat: true, model: "knee-sim", id: 1}
	r.chunkEnvelope()
	w := bufio.NewWriter(io.Discard)
	tok := " latency"
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.buf = append(r.buf[:0], r.prefix...)
		r.buf = appendJSONString(r.buf, tok)
		r.buf = append(r.buf, r.suffix...)
		w.Write(r.buf)
		w.Flush()
	}
}

// BenchmarkDecodeRequest decodes and validates the body of a short
// streamed chat request, as knee sends it: work done once per request.
func BenchmarkDecodeRequest(b *testing.B) {
	body := []byte(`{"model":"knee-sim-instant","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"hi there, what is a knee?"}],"max_tokens":4,"stream":true,"stream_options":{"include_usage":true},"temperature":0}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeRequest(body, true); err != nil {
			b.Fatal(err)
		}
	}
}
