package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAppendString checks that every string, plain or not, comes back
// unchanged through a JSON decoder.
func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain text, 42 < 43 & more", `say "hi" \ bye`, "tab\tnew\nline\x00", "héllo 😀 \u2028", "bad \xff utf8"} {
		b := AppendString([]byte("x"), s)
		var got string
		if err := json.Unmarshal(b[1:], &got); err != nil {
			t.Fatalf("%q gave invalid JSON %s: %v", s, b[1:], err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); got != want {
			t.Errorf("%q came back as %q", s, got)
		}
	}
}
