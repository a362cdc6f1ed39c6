package server

import (
	"bufio"
	"io"
	"testing"
)

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
