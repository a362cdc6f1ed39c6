package server

import (
	"io"
	"testing"
)

// BenchmarkSSEChunk is the server's per-token formatting: one event built
// in the buffer that keeps the prebuilt envelope, framed as an HTTP chunk
// in place and written.
func BenchmarkSSEChunk(b *testing.B) {
	r := &run{s: &Server{created: 1}, chat: true, model: "knee-sim", id: 1, plan: &Plan{}}
	r.chunkEnvelope()
	tok := " latency"
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, _ = io.Discard.Write(frameChunk(r.tokenEvent(tok)))
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
