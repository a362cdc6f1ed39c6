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
