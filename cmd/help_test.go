package cmd

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagMention is a flag named in help text.
var flagMention = regexp.MustCompile(`(?:^|[\s(\[,/"'])--([a-z][a-z0-9-]+)`)

// TestHelpNamesOnlyItsOwnFlags fails when a command's help (its texts,
// examples and flag descriptions) names a flag the command does not have:
// text copied from another command that would send the user to a flag
// that is refused.
func TestHelpNamesOnlyItsOwnFlags(t *testing.T) {
	t.Parallel()
	root := NewRoot()
	for _, c := range root.Commands() {
		var texts []string
		texts = append(texts, c.Long, c.Example)
		c.Flags().VisitAll(func(f *pflag.Flag) { texts = append(texts, f.Usage) })
		for _, text := range texts {
			// Flags of other commands the text names ("the result knee
			// run wrote with --shard") are theirs to have.
			others := []*cobra.Command{c}
			for _, m := range otherCommand.FindAllStringSubmatch(text, -1) {
				if o, _, err := root.Find([]string{m[1]}); err == nil && o != root {
					others = append(others, o)
				}
			}
			for _, m := range flagMention.FindAllStringSubmatch(text, -1) {
				name := m[1]
				if name == "help" || slices.ContainsFunc(others, func(o *cobra.Command) bool { return o.Flags().Lookup(name) != nil }) {
					continue
				}
				if strings.Contains(text, "vLLM") || strings.Contains(text, "SGLang") || strings.Contains(text, "llama") {
					// Engines' own flags (vLLM's --enable-prefix-caching) are
					// named for the user's server, not for knee.
					if engineFlags[name] {
						continue
					}
				}
				t.Errorf("knee %s: its help names --%s, which it does not have: %q", c.Name(), name, text)
			}
		}
	}
}

// otherCommand is a knee command named in help text.
var otherCommand = regexp.MustCompile(`knee ([a-z0-9]+)`)

// engineFlags are serving engines' flags that help texts may name.
var engineFlags = map[string]bool{
	"enable-prefix-caching": true, "enable-prompt-tokens-details": true, "enable-cache-report": true,
	"no-enable-prefix-caching": true, "disable-radix-cache": true, "metrics": true, "slot-prompt-similarity": true,
}

// TestHelpGolden keeps every command's help in a golden file
// (testdata/help/<command>.txt; go test -run TestHelpGolden -update).
func TestHelpGolden(t *testing.T) {
	t.Parallel()
	root := NewRoot()
	for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
		if c.Hidden {
			continue
		}
		var b bytes.Buffer
		c.SetOut(&b)
		c.SetErr(&b)
		if err := c.Help(); err != nil {
			t.Fatal(err)
		}
		name := c.Name()
		golden(t, "help/"+name+".txt", b.Bytes())
	}
}

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; got:\n%s", name, got)
	}
}

// TestLongHelpLines: every line of a command's long help fits 80 columns,
// so a paragraph reads as one block in any terminal (a line run long, or
// a word left alone on one, shows as a ragged edge).
func TestLongHelpLines(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for i, line := range strings.Split(c.Long, "\n") {
			if n := len([]rune(line)); n > 80 {
				t.Errorf("knee %s: long help line %d has %d columns: %q", c.Name(), i+1, n, line)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot())
}
