package content

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ResponsesFile is the parsed form of a responses.yml: scripted answers
// checked top to bottom against the last user message.
type ResponsesFile struct {
	Version   int             `yaml:"version"`
	Seed      uint64          `yaml:"seed"`
	Responses []ResponseEntry `yaml:"responses"`
	Default   *Answer         `yaml:"default"`
}

// ResponseEntry is one scripted answer and the rule that selects it.
type ResponseEntry struct {
	ID     string `yaml:"id"`
	Match  Match  `yaml:"match"`
	Answer `yaml:",inline"`
}

// Match holds exactly one operator; each takes a value or a list.
type Match struct {
	Exact      stringList `yaml:"exact"`
	Contains   stringList `yaml:"contains"`
	StartsWith stringList `yaml:"starts_with"`
	Regex      stringList `yaml:"regex"`
}

// Answer is what is said: fixed content, one of several variants, or
// synthetic filler of a given length. Think, when set, is thought before
// it (streamed as reasoning, whatever the model); ToolCall, when set and
// the request offers that function, is said instead of the words (which
// then answer once the tool's result is in).
type Answer struct {
	Content   *string       `yaml:"content"`
	Variants  []string      `yaml:"variants"`
	Synthetic *Synthetic    `yaml:"synthetic"`
	Think     *string       `yaml:"think"`
	ToolCall  *ScriptedCall `yaml:"tool_call"`
}

// ScriptedCall is a tool call an answer makes: the function's name and
// its arguments (a template: {{ and }} for literal braces).
type ScriptedCall struct {
	Name      string `yaml:"name"`
	Arguments string `yaml:"arguments"`
}

// Synthetic asks for filler of Tokens tokens: one number, or [min, max].
type Synthetic struct {
	Tokens intRange `yaml:"tokens"`
}

type stringList []string

func (s *stringList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*s = []string{n.Value}
		return nil
	case yaml.SequenceNode:
		var l []string
		if err := n.Decode(&l); err != nil {
			return err
		}
		*s = l
		return nil
	}
	return fmt.Errorf("line %d: want a string or a list of strings", n.Line)
}

type intRange struct{ Min, Max int }

func (r *intRange) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		var v int
		if err := n.Decode(&v); err != nil {
			return err
		}
		r.Min, r.Max = v, v
		return nil
	case yaml.SequenceNode:
		var l []int
		if err := n.Decode(&l); err != nil {
			return err
		}
		if len(l) != 2 {
			return fmt.Errorf("line %d: tokens range must be [min, max]", n.Line)
		}
		r.Min, r.Max = l[0], l[1]
		return nil
	}
	return fmt.Errorf("line %d: tokens must be a number or [min, max]", n.Line)
}

// ParseResponses parses and validates a responses file. name is used in
// error messages (a path or builtin:NAME).
func ParseResponses(name string, data []byte) (*Responder, error) {
	var f ResponsesFile
	if err := DecodeStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	r, err := newResponder(&f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return r, nil
}

// template is an answer text split into literal and placeholder parts.
type template []templatePart

type templatePart struct {
	text        string
	placeholder bool
}

// parseTemplate splits s at {name} placeholders; {{ and }} are literal
// braces.
func parseTemplate(s string) (template, error) {
	var t template
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{':
			lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			lit.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unclosed { in %q (write {{ for a literal brace)", s)
			}
			name := s[i+1 : i+end]
			if name == "" || strings.ContainsAny(name, "{ ") {
				return nil, fmt.Errorf("bad placeholder {%s} in %q", name, s)
			}
			if lit.Len() > 0 {
				t = append(t, templatePart{text: lit.String()})
				lit.Reset()
			}
			t = append(t, templatePart{text: name, placeholder: true})
			i += end
		case c == '}':
			return nil, fmt.Errorf("stray } in %q (write }} for a literal brace)", s)
		default:
			lit.WriteByte(c)
		}
	}
	if lit.Len() > 0 {
		t = append(t, templatePart{text: lit.String()})
	}
	return t, nil
}

func (t template) render(vars func(string) string) string {
	var b strings.Builder
	for _, p := range t {
		if p.placeholder {
			b.WriteString(vars(p.text))
		} else {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// compiledAnswer is an Answer ready to use.
type compiledAnswer struct {
	variants  []template
	synthetic bool
	min, max  int
	// think and callArgs are the scripted thought and call arguments
	// (nil: none); callName the call's function.
	think, callArgs template
	callName        string
}

func compileAnswer(a *Answer, groups map[string]bool) (*compiledAnswer, error) {
	kinds := 0
	ca := &compiledAnswer{}
	if a.Content != nil {
		kinds++
		t, err := parseTemplate(*a.Content)
		if err != nil {
			return nil, err
		}
		ca.variants = []template{t}
	}
	if a.Variants != nil {
		kinds++
		if len(a.Variants) == 0 {
			return nil, errors.New("variants is empty")
		}
		for _, v := range a.Variants {
			t, err := parseTemplate(v)
			if err != nil {
				return nil, err
			}
			ca.variants = append(ca.variants, t)
		}
	}
	if a.Synthetic != nil {
		kinds++
		ca.synthetic = true
		ca.min, ca.max = a.Synthetic.Tokens.Min, a.Synthetic.Tokens.Max
		if ca.min < 1 || ca.max < ca.min {
			return nil, fmt.Errorf("synthetic tokens must be at least 1 and min ≤ max, got [%d, %d]", ca.min, ca.max)
		}
	}
	if kinds != 1 {
		return nil, errors.New("give exactly one of content, variants and synthetic")
	}
	if a.Think != nil {
		t, err := parseTemplate(*a.Think)
		if err != nil || len(t) == 0 {
			return nil, fmt.Errorf("think: %v", cmpErr(err, "it is empty"))
		}
		ca.think = t
	}
	if c := a.ToolCall; c != nil {
		if c.Name == "" {
			return nil, errors.New("tool_call needs a name")
		}
		t, err := parseTemplate(c.Arguments)
		if err != nil || len(t) == 0 {
			return nil, fmt.Errorf("tool_call.arguments: %v", cmpErr(err, "they are empty"))
		}
		ca.callName, ca.callArgs = c.Name, t
	}
	for _, t := range append([]template{ca.think, ca.callArgs}, ca.variants...) {
		for _, p := range t {
			if p.placeholder && p.text != "last_user_message" && p.text != "model" && !groups[p.text] {
				return nil, fmt.Errorf("placeholder {%s} does not exist (use {last_user_message}, {model} or a named regex group)", p.text)
			}
		}
	}
	return ca, nil
}

// entry is a compiled ResponseEntry.
type entry struct {
	id      string
	op      string
	values  []string // lower-cased, for exact/contains/starts_with
	lits    []literal
	regexes []*regexp.Regexp
	// required holds, per regex, lower-cased substrings that every match
	// must contain: a cheap test before running the regex.
	required [][]literal
	answer   *compiledAnswer
}

// Responder decides what the simulator says.
type Responder struct {
	seed    uint64
	entries []*entry
	def     *compiledAnswer
}

func newResponder(f *ResponsesFile) (*Responder, error) {
	if f.Version != 0 && f.Version != 1 {
		return nil, fmt.Errorf("version %d is not supported (want 1)", f.Version)
	}
	if f.Default == nil {
		return nil, errors.New("a default answer is required")
	}
	r := &Responder{seed: f.Seed}
	seen := map[string]bool{}
	for i := range f.Responses {
		e := &f.Responses[i]
		where := fmt.Sprintf("entry %d", i+1)
		if e.ID != "" {
			where = fmt.Sprintf("entry %q", e.ID)
		}
		if e.ID == "" {
			return nil, fmt.Errorf("%s: missing id", where)
		}
		if seen[e.ID] {
			return nil, fmt.Errorf("%s: duplicate id", where)
		}
		seen[e.ID] = true
		ce, err := compileEntry(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		r.entries = append(r.entries, ce)
	}
	def, err := compileAnswer(f.Default, nil)
	if err != nil {
		return nil, fmt.Errorf("default: %v", err)
	}
	r.def = def
	return r, nil
}

func compileEntry(e *ResponseEntry) (*entry, error) {
	ce := &entry{id: e.ID}
	ops := 0
	set := func(op string, vals stringList) {
		if vals != nil {
			ops++
			ce.op = op
			for _, v := range vals {
				ce.values = append(ce.values, strings.ToLower(strings.TrimSpace(v)))
			}
		}
	}
	set("exact", e.Match.Exact)
	set("contains", e.Match.Contains)
	set("starts_with", e.Match.StartsWith)
	groups := map[string]bool{}
	if e.Match.Regex != nil {
		ops++
		ce.op = "regex"
		ce.values = nil
		for _, src := range e.Match.Regex {
			re, err := regexp.Compile("(?i)" + src)
			if err != nil {
				return nil, fmt.Errorf("regex %q does not compile: %v", src, err)
			}
			ce.regexes = append(ce.regexes, re)
			req, err := requiredLiterals(src)
			if err != nil {
				return nil, err
			}
			lits := make([]literal, len(req))
			for i, r := range req {
				lits[i] = newLiteral(r)
			}
			ce.required = append(ce.required, lits)
			for _, g := range re.SubexpNames() {
				if g != "" {
					groups[g] = true
				}
			}
		}
	}
	if ops != 1 {
		return nil, errors.New("match needs exactly one of exact, contains, starts_with and regex")
	}
	for _, v := range ce.values {
		ce.lits = append(ce.lits, newLiteral(v))
	}
	if len(ce.values) == 0 && len(ce.regexes) == 0 {
		return nil, errors.New("match has no values")
	}
	a, err := compileAnswer(&e.Answer, groups)
	if err != nil {
		return nil, err
	}
	ce.answer = a
	return ce, nil
}

// cmpErr is err, or what is wrong when there is no error.
func cmpErr(err error, what string) error {
	if err != nil {
		return err
	}
	return errors.New(what)
}
