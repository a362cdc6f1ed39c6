package cmd

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/results/input"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// maxLoadFileBytes bounds a load file.
const maxLoadFileBytes = 1 << 20

// errPrinted ends a command that printed what it was asked for instead
// of running (--print-load): exit 0, nothing more said.
var errPrinted = errors.New("printed")

// loadFile is -f/--load-file and --print-load: a YAML file of the
// command's flags by name (the flags given override it), and the
// effective file of a command line.
type loadFile struct {
	path  string
	print bool
}

// withLoadFile gives c the load file's flags and applies the file before
// c runs; load takes a mix written inline (mix: classes).
func withLoadFile(c *cobra.Command, load *loadFlags) {
	var lf loadFile
	fs := c.Flags()
	fs.StringVarP(&lf.path, "load-file", "f", "", "a YAML file of this command's flags by name (rate: 4, slo: ttft.p95:500, mix: {classes: …}); flags given override it")
	fs.BoolVar(&lf.print, "print-load", false, "print the load file of this command line (the file's and the flags' values) and exit")
	markInputs(c, "load-file")
	run := c.RunE
	c.RunE = func(c *cobra.Command, args []string) error {
		if err := lf.apply(c, load); err != nil {
			return err
		}
		if lf.print {
			return lf.write(c, load)
		}
		return run(c, args)
	}
}

// apply sets every flag the file names and the command line did not
// give, then checks the flags as parsing would have.
func (lf *loadFile) apply(c *cobra.Command, load *loadFlags) error {
	if lf.path == "" {
		return nil
	}
	b, err := input.Read(c.Context(), lf.path, maxLoadFileBytes, "a load file")
	if err != nil {
		return withCode(ExitRuntime, fmt.Errorf("--load-file: %w", err))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return usageErr("--load-file %s: %v", lf.path, err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return usageErr("--load-file %s: line %d: a load file is a mapping of flag names to values (rate: 4)", lf.path, top.Line)
	}
	given := map[string]bool{}
	c.Flags().Visit(func(f *pflag.Flag) { given[f.Name] = true })
	for i := 0; i+1 < len(top.Content); i += 2 {
		if err := lf.set(c, load, top.Content[i], top.Content[i+1], given); err != nil {
			return err
		}
	}
	if err := c.ValidateFlagGroups(); err != nil {
		return usageErr("--load-file %s: %v", lf.path, err)
	}
	return finiteFlags(c)
}

// set applies one key of the file, unless the command line gave the flag
// or one it excludes.
func (lf *loadFile) set(c *cobra.Command, load *loadFlags, key, val *yaml.Node, given map[string]bool) error {
	at := func(format string, a ...any) error {
		return usageErr("--load-file %s: line %d: %s", lf.path, key.Line, fmt.Sprintf(format, a...))
	}
	f := c.Flags().Lookup(key.Value)
	if f == nil || key.Value == "load-file" || key.Value == "print-load" {
		if owners := flagOwners(c, key.Value); owners != "" && key.Value != "load-file" && key.Value != "print-load" {
			// One file serves the commands of a load: a sweep's levels
			// beside a run's rate. Said, not silent.
			fmt.Fprintf(c.ErrOrStderr(), "knee: --load-file %s: line %d: %s is a flag of %s, not of knee %s: left out\n",
				lf.path, key.Line, key.Value, owners, c.Name())
			return nil
		}
		return at("%s is no flag of knee %s%s", key.Value, c.Name(), suggestFlag(c, key.Value))
	}
	if given[f.Name] || excludedBy(f, given) {
		return nil
	}
	if f.Name == "mix" && (val.Kind == yaml.MappingNode || val.Kind == yaml.SequenceNode) {
		b, err := yaml.Marshal(val)
		if err != nil {
			return at("mix: %v", err)
		}
		load.MixData = b
		return c.Flags().Set("mix", lf.path+" (mix:)")
	}
	var values []string
	switch val.Kind {
	case yaml.ScalarNode:
		values = []string{val.Value}
	case yaml.SequenceNode:
		for _, v := range val.Content {
			if v.Kind != yaml.ScalarNode {
				return at("%s: a list of plain values", key.Value)
			}
			values = append(values, v.Value)
		}
		if !repeatable(f) {
			values = []string{strings.Join(values, ",")}
		}
	default:
		return at("%s: a value or a list of values", key.Value)
	}
	for _, v := range values {
		if err := c.Flags().Set(f.Name, v); err != nil {
			return at("%s: %v", key.Value, err)
		}
	}
	return nil
}

// flagOwners names the other commands that take a flag of that name,
// "knee plan" or "knee predict and sweep" ("" for none).
func flagOwners(c *cobra.Command, name string) string {
	var out []string
	for _, sub := range c.Root().Commands() {
		if sub != c && !sub.Hidden && sub.Flags().Lookup(name) != nil {
			out = append(out, sub.Name())
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		return ""
	}
	if n := len(out); n > 1 {
		out = append(out[:n-2], out[n-2]+" and "+out[n-1])
	}
	return "knee " + strings.Join(out, ", ")
}

// repeatable reports whether a flag takes one value per use.
func repeatable(f *pflag.Flag) bool {
	return strings.HasSuffix(f.Value.Type(), "Array") || strings.HasSuffix(f.Value.Type(), "Slice") || f.Value.Type() == "strings"
}

// excludedBy reports whether the command line gave a flag f cannot be
// given with: the line's choice stands (--concurrency over a file's rate).
func excludedBy(f *pflag.Flag, given map[string]bool) bool {
	for _, group := range f.Annotations["cobra_annotation_mutually_exclusive"] {
		for _, other := range strings.Fields(group) {
			if other != f.Name && given[other] {
				return true
			}
		}
	}
	return false
}

// suggestFlag is " (did you mean x?)" for a near name, else "".
func suggestFlag(c *cobra.Command, name string) string {
	if best := nearFlag(c, name); best != "" {
		return " (did you mean " + best + "?)"
	}
	return ""
}

// nearFlag is c's listed flag nearest name, a typo or two away ("" when
// none is).
func nearFlag(c *cobra.Command, name string) string {
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	return results.Nearest(name, names)
}

// write prints the effective load file: every flag the file or the
// command line set, by group, typed as YAML reads it back.
func (lf *loadFile) write(c *cobra.Command, load *loadFlags) error {
	var names []string
	c.Flags().Visit(func(f *pflag.Flag) {
		if f.Name != "load-file" && f.Name != "print-load" {
			names = append(names, f.Name)
		}
	})
	slices.SortStableFunc(names, func(a, b string) int { return groupRank(a) - groupRank(b) })
	top := &yaml.Node{Kind: yaml.MappingNode}
	for _, name := range names {
		v, err := loadValue(c.Flags().Lookup(name), load)
		if err != nil {
			return err
		}
		top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, v)
	}
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{top}})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.OutOrStdout(), "# knee %s -f FILE\n%s", c.Name(), out)
	return errPrinted
}

// loadValue is a flag's value as a YAML node of its type.
func loadValue(f *pflag.Flag, load *loadFlags) (*yaml.Node, error) {
	if f.Name == "mix" && load.MixData != nil {
		var n yaml.Node
		if err := yaml.Unmarshal(load.MixData, &n); err != nil || len(n.Content) == 0 {
			return nil, fmt.Errorf("mix: %v", err)
		}
		return n.Content[0], nil
	}
	if sv, ok := f.Value.(pflag.SliceValue); ok && repeatable(f) {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, s := range sv.GetSlice() {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s})
		}
		return seq, nil
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: f.Value.String()}
	switch f.Value.Type() {
	case "bool", "int", "int64", "uint", "uint64", "float64":
		// Read back as the number or bool it is.
		if _, err := strconv.ParseFloat(n.Value, 64); err == nil || f.Value.Type() == "bool" {
			return n, nil
		}
	}
	n.Style = yaml.DoubleQuotedStyle
	return n, nil
}

// groupRank orders a flag by its help group.
func groupRank(name string) int {
	g := helpGroupOf[name].group
	for i, hg := range helpGroups {
		if hg.name == g {
			return i
		}
	}
	return len(helpGroups)
}
