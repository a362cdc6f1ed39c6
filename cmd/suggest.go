package cmd

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// unknownFlag matches pflag's words for a flag it does not know.
var unknownFlag = regexp.MustCompile(`^unknown (?:shorthand )?flag: '?-{1,2}([^' ]+)'?`)

// flagHint adds to an unknown-flag error what the user probably meant: a
// flag of this command a typo away, or the other commands that have it.
func flagHint(c *cobra.Command, err error) error {
	m := unknownFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	name, _, _ := strings.Cut(m[1], "=")
	// A flag another command takes is that, not a typo of one of these.
	if owners := flagOwners(c, name); owners != "" {
		return fmt.Errorf("%w (--%s is a flag of %s)", err, name, owners)
	}
	if best := nearFlag(c, name); best != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, best)
	}
	return err
}

// flagGroup matches cobra's words for mutually exclusive flags given
// together.
var flagGroup = regexp.MustCompile(`^if any flags in the group \[([^\]]*)\] are set none of the others can be; \[([^\]]*)\] were all set$`)

// groupMessage says cobra's exclusive-group error in knee's words.
func groupMessage(text string) (string, bool) {
	m := flagGroup.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	var given []string
	for _, f := range strings.Fields(m[2]) {
		given = append(given, "--"+f)
	}
	return fmt.Sprintf("%s cannot be given together: give one of them", strings.Join(given, " and ")), true
}

// goodputBound matches one bound of a goodput, as vLLM writes them.
var goodputBound = regexp.MustCompile(`^[a-z_]+:[0-9.eE+-]+$`)

// goodputArgs takes no arguments but the rest of a --goodput written as
// vLLM's benchmark takes it, bounds apart (--goodput ttft:300 tpot:50),
// which the shell hands over as separate words.
func goodputArgs(f *loadFlags) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		if !c.Flags().Changed("goodput") || !slices.ContainsFunc(args, goodputBound.MatchString) {
			return noArgs(c, args)
		}
		for _, a := range args {
			if !goodputBound.MatchString(a) {
				return noArgs(c, []string{a})
			}
		}
		f.Goodput += "," + strings.Join(args, ",")
		return nil
	}
}

// hideDefault keeps help from printing the sentinel defaults (-1: "the
// usual for the format") of the named flags beside the words that say
// what they mean.
func hideDefault(fs *pflag.FlagSet, names ...string) {
	for _, n := range names {
		fs.Lookup(n).DefValue = "0"
	}
}

// noArgs is the rule of a command that takes flags only. A word left over
// is most often a flag's value split by the shell (--header X-Key: v) or
// a value given twice; cobra called it an "unknown command".
func noArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return usageErr("%s takes flags only, and %q is none: a flag's value with a space in it needs quotes "+
		"(see knee %s --help)", c.Name(), args[0], c.Name())
}
