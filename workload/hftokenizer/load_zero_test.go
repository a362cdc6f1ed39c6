package hftokenizer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadRefusesWhatIsNoJSONObject: a file that does not open with a
// JSON object (zeros, as /dev/zero gives) is refused at its first bytes,
// not read to the size bound first.
func TestLoadRefusesWhatIsNoJSONObject(t *testing.T) {
	for name, body := range map[string]string{"zeros": strings.Repeat("\x00", 1<<20), "empty": "", "array": "[1, 2]"} {
		p := filepath.Join(t.TempDir(), "tokenizer.json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(context.Background(), p); err == nil || !strings.Contains(err.Error(), "not a tokenizer.json") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Load(context.Background(), "/dev/zero"); err == nil {
		t.Error("/dev/zero read as a tokenizer")
	}
}
