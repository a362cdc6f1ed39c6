package content

import (
	"regexp/syntax"
	"strings"
)

// requiredLiterals returns lower-cased substrings that every match of the
// regex must contain. A prompt lacking any of them cannot match, so the
// regex need not run: on long prompts that is the difference between a few
// microseconds and hundreds.
func requiredLiterals(src string) ([]string, error) {
	re, err := syntax.Parse(src, syntax.Perl|syntax.FoldCase)
	if err != nil {
		return nil, err
	}
	var out []string
	collectRequired(re.Simplify(), &out)
	return out, nil
}

// collectRequired walks the parse tree and keeps the literal runs that sit
// on every path through it: concatenations and captures pass requirements
// through; alternations and optional or starred parts require nothing.
func collectRequired(re *syntax.Regexp, out *[]string) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) > 0 {
			*out = append(*out, strings.ToLower(string(re.Rune)))
		}
	case syntax.OpCapture:
		collectRequired(re.Sub[0], out)
	case syntax.OpPlus:
		collectRequired(re.Sub[0], out)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			collectRequired(re.Sub[0], out)
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			collectRequired(sub, out)
		}
	}
}

// matchResult is the entry that answered and its regex groups.
type matchResult struct {
	entry  *entry
	groups map[string]string
}

// match finds the first entry matching text (already trimmed); lower is
// its lower-cased form.
func (r *Responder) match(text, lower string) matchResult {
	for _, e := range r.entries {
		switch e.op {
		case "exact":
			for _, v := range e.values {
				if lower == v {
					return matchResult{entry: e}
				}
			}
		case "contains":
			for _, l := range e.lits {
				if l.in(lower) {
					return matchResult{entry: e}
				}
			}
		case "starts_with":
			for _, v := range e.values {
				if strings.HasPrefix(lower, v) {
					return matchResult{entry: e}
				}
			}
		case "regex":
		next:
			for i, re := range e.regexes {
				for _, lit := range e.required[i] {
					if !lit.in(lower) {
						continue next
					}
				}
				m := re.FindStringSubmatch(text)
				if m == nil {
					continue
				}
				groups := map[string]string{}
				for gi, name := range re.SubexpNames() {
					if name != "" {
						groups[name] = m[gi]
					}
				}
				return matchResult{entry: e, groups: groups}
			}
		}
	}
	return matchResult{}
}
