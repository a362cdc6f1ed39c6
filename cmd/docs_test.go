package cmd

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"mvdan.cc/sh/v3/syntax"
)

// shellBlock matches a Markdown code block of shell commands, and
// inlineKnee an inline span of one knee command.
var (
	shellBlock = regexp.MustCompile("(?s)```(?:sh|bash|shell)\n(.*?)```")
	inlineKnee = regexp.MustCompile("`(knee [a-z][^`]*)`")
	// placeholder is a value written as what it stands for: N, URL,
	// GPU[xN]/MODEL, FILE.json, NAME[:KEY].
	placeholder = regexp.MustCompile(`^[A-Z][A-Z0-9_]*([\[\]/.:@,=a-z-]*[A-Z0-9_\]]*)*$`)
)

// docCommands are the knee commands of the README's and the guides' shell
// blocks, each as its arguments (knee itself left out), with where it
// stands. A word knee cannot read as a literal (a variable, a glob) is kept
// as written: every flag name is still literal.
func docCommands(t *testing.T) map[string][]string {
	t.Helper()
	files, _ := filepath.Glob("../docs/*.md")
	files = append(files, "../README.md")
	out := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var blocks []string
		for _, m := range shellBlock.FindAllStringSubmatch(string(b), -1) {
			blocks = append(blocks, m[1])
		}
		for _, m := range inlineKnee.FindAllStringSubmatch(shellBlock.ReplaceAllString(string(b), ""), -1) {
			if !strings.ContainsAny(m[1], "…|<>") && !strings.Contains(m[1], "...") {
				blocks = append(blocks, m[1])
			}
		}
		for bi, block := range blocks {
			prog, err := syntax.NewParser().Parse(strings.NewReader(block), f)
			if err != nil {
				t.Errorf("%s: block %d is no shell: %v", f, bi+1, err)
				continue
			}
			syntax.Walk(prog, func(n syntax.Node) bool {
				call, ok := n.(*syntax.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				words := make([]string, len(call.Args))
				for i, w := range call.Args {
					words[i] = wordText(w)
				}
				switch {
				case words[0] == "knee":
					words = words[1:]
				case len(words) > 2 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/knee":
					words = words[3:]
				default:
					return true
				}
				out[f+": knee "+strings.Join(words, " ")] = words
				return true
			})
		}
	}
	return out
}

// wordText is a shell word as its command receives it, where it is a
// literal or a quoted literal; otherwise the word as written.
func wordText(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				}
			}
		default:
			b.WriteString("X")
		}
	}
	return b.String()
}

// TestDocsCommandsParse: every knee command the README and the guides
// show names a command knee has and flags it takes, with values of the
// flags' types, so docs cannot drift from the code.
func TestDocsCommandsParse(t *testing.T) {
	t.Parallel()
	cmds := docCommands(t)
	if len(cmds) < 20 {
		t.Fatalf("only %d knee commands found in the docs", len(cmds))
	}
	// Examples of mistakes the docs show on purpose.
	wrongOnPurpose := map[string]bool{"knee run --rates": true}
	for where, args := range cmds {
		if wrongOnPurpose["knee "+strings.Join(args, " ")] {
			continue
		}
		root := NewRoot()
		root.InitDefaultCompletionCmd()
		c, rest, err := root.Find(args)
		if err != nil || c == root && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			t.Errorf("%s: no such command (%v)", where, err)
			continue
		}
		// Prose names a flag by itself (`knee sim --models`): a last
		// flag without its value is a mention, not a command.
		err = c.ParseFlags(samples(c, rest))
		mention := len(rest) > 0 && strings.HasPrefix(rest[len(rest)-1], "-") && err != nil && strings.Contains(err.Error(), "flag needs an argument")
		if err != nil && !errors.Is(err, pflag.ErrHelp) && !mention {
			t.Errorf("%s: %v", where, err)
		}
	}
}

// samples puts a value of each flag's type where the docs write a
// placeholder (--rate R, --shards N, --target URL).
func samples(c *cobra.Command, args []string) []string {
	out := slices.Clone(args)
	sample := func(name string) string {
		f := c.Flags().Lookup(strings.TrimLeft(name, "-"))
		if f == nil {
			return "x"
		}
		switch f.Value.Type() {
		case "int", "uint64", "int64", "float64":
			return "1"
		case "duration":
			return "1s"
		}
		return "x"
	}
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if name, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "--") && placeholder.MatchString(v) {
			out[i] = name + "=" + sample(name)
			continue
		}
		if strings.HasPrefix(a, "-") && i+1 < len(out) && placeholder.MatchString(out[i+1]) {
			if f := c.Flags().Lookup(strings.TrimLeft(a, "-")); f != nil && f.Value.Type() != "bool" {
				out[i+1] = sample(a)
				i++
			}
		}
	}
	return out
}

// TestGuidesOpenWithAnExample: every guide in docs/ opens, under its
// title, with a command to run (which TestDocsCommandsParse parses) and
// what it printed.
func TestGuidesOpenWithAnExample(t *testing.T) {
	guides, _ := filepath.Glob("../docs/*.md")
	for _, g := range guides {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(b), "\n", 4)
		if len(lines) < 3 || !strings.HasPrefix(lines[0], "# ") || lines[2] != "```sh" {
			t.Errorf("%s does not open with an example (a ```sh block under its title)", g)
		}
	}
}
