package content

import (
	"os"
	"testing"
)

// FuzzParseResponses: a responses file is the user's own YAML (knee sim
// --responses). Whatever it holds, it parses to a responder or an error
// naming the line, never a panic.
func FuzzParseResponses(f *testing.F) {
	for _, name := range []string{"responses", "bench-responses"} {
		if b, err := os.ReadFile("../model/builtin/" + name + ".yml"); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("responses:\n  - match: {contains: hi}\n    tokens: [1, .nan]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseResponses("fuzz.yml", data)
	})
}
