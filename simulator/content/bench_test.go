package content

import (
	"os"
	"strings"
	"testing"
)

// builtinResponses reads one of the simulator's built-in responses files.
func builtinResponses(tb testing.TB, name string) *Responder {
	tb.Helper()
	b, err := os.ReadFile("../model/builtin/" + name + ".yml")
	if err != nil {
		tb.Fatal(err)
	}
	r, err := ParseResponses("builtin:"+name, b)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// BenchmarkMatch4000 matches a 4,000-token prompt against the built-in
// responses, the work done for every request before its plan exists.
func BenchmarkMatch4000(b *testing.B) {
	r := builtinResponses(b, "responses")
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
	r := builtinResponses(b, "bench-responses")
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
