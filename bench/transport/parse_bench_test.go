package transport

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkStreamParse is the client's per-token work once bytes have
// arrived: split the stream into lines, pick out data payloads, and scan
// each chunk for content, finish reason and usage — without decoding JSON.
func BenchmarkStreamParse(b *testing.B) {
	var stream bytes.Buffer
	const tokens = 1000
	for i := 0; i < tokens; i++ {
		fmt.Fprintf(&stream, "data: {\"id\":\"chatcmpl-knee-1\",\"object\":\"chat.completion.chunk\",\"created\":1795944720,\"model\":\"knee-sim\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok%d\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", i)
	}
	stream.WriteString("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":1000,\"total_tokens\":1008,\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\ndata: [DONE]\n\n")
	raw := stream.Bytes()
	lr := newLineReader(nil, 64*1024)
	var c chunk
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lr.reset(bytes.NewReader(raw))
		n := 0
		for {
			line, err := lr.next()
			if err != nil {
				break
			}
			if p, ok := dataPayload(line); ok && len(p) > 0 && p[0] == '{' {
				scanChunk(p, &c)
				if c.content {
					n++
				}
			}
		}
		if n != tokens {
			b.Fatalf("%d tokens", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
}

// BenchmarkStreamParseResponses is BenchmarkStreamParse for the
// Responses API's typed events as vLLM writes them: an event line before
// each data line, and a longer event (its type last).
func BenchmarkStreamParseResponses(b *testing.B) {
	var stream bytes.Buffer
	const tokens = 1000
	for i := 0; i < tokens; i++ {
		fmt.Fprintf(&stream, "event: response.output_text.delta\ndata: {\"content_index\":0,\"delta\":\" tok%d\",\"item_id\":\"msg_knee-1\",\"logprobs\":[],\"output_index\":0,\"sequence_number\":%d,\"type\":\"response.output_text.delta\"}\n\n", i, i+4)
	}
	stream.WriteString("event: response.completed\ndata: {\"response\":{\"id\":\"resp_1\",\"usage\":{\"input_tokens\":8,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":1000,\"total_tokens\":1008}},\"sequence_number\":1005,\"type\":\"response.completed\"}\n\n")
	raw := stream.Bytes()
	lr := newLineReader(nil, 64*1024)
	var c chunk
	var p progress
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lr.reset(bytes.NewReader(raw))
		n := 0
		for {
			line, err := lr.next()
			if err != nil {
				break
			}
			if d, ok := dataPayload(line); ok && len(d) > 0 && d[0] == '{' {
				responsesProtocol{}.scan(d, &c, &p)
				if c.content {
					n++
				}
			}
		}
		if n != tokens {
			b.Fatalf("%d tokens", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
}
