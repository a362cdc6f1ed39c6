package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// A mix is several classes of requests in one load: each its share of
// the arrivals, its own prompts, target (a model: a LoRA adapter is a
// model name on vLLM and SGLang), priority, body and headers, and its
// own SLO. Every class's arrivals come from the one schedule, in an order
// that keeps each class's count within one of its share at every
// prefix (see Mix.class), so a mix is reproducible and shards split it
// as they split any load.

// MixClass is one class of a --mix file as written.
type MixClass struct {
	Name  string  `yaml:"name"`
	Share float64 `yaml:"share"`
	// Rate, given instead of Share by every class, is the class's own
	// arrival rate: the load is their sum, each class's share its part
	// of it (and a sweep can vary one class's rate, the others fixed).
	Rate float64 `yaml:"rate"`
	// Dataset, when set, is a file of the class's prompts, as --dataset
	// reads one (its paths relative to the mix file), DatasetFormat its
	// format; MaxTokens is then what a line without its own asks.
	Dataset       string `yaml:"dataset"`
	DatasetFormat string `yaml:"dataset_format"`
	// InputTokens and MaxTokens size the class's synthetic prompts; the
	// stddevs and PrefixTokens spread and share them as the flags do.
	InputTokens     int     `yaml:"input_tokens"`
	InputStddev     float64 `yaml:"input_tokens_stddev"`
	MaxTokens       int     `yaml:"max_tokens"`
	MaxTokensStddev float64 `yaml:"max_tokens_stddev"`
	// Model is sent as the request's model (a LoRA adapter's name);
	// empty, the run's --model.
	Model string `yaml:"model"`
	// Priority is sent as vLLM's and SGLang's "priority" (lower is
	// served first under --scheduling-policy priority).
	Priority *int `yaml:"priority"`
	// ExtraBody adds fields to the class's bodies (over --extra-body's);
	// Headers adds headers (a tenant's key).
	ExtraBody map[string]any    `yaml:"extra_body"`
	Headers   map[string]string `yaml:"headers"`
	// SLO is the class's own, as --slo writes one (ttft_sched_p95:300).
	SLO string `yaml:"slo"`
	// Line is where the class starts in the file.
	Line int `yaml:"-"`
}

// MixFile is a --mix file.
type MixFile struct {
	Classes []MixClass `yaml:"classes"`
}

// maxClasses bounds a mix: past it the per-class results are noise.
const maxClasses = 64

var className = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// ParseMix reads a --mix file. Every error names the line at fault.
func ParseMix(data []byte) (*MixFile, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("the file is empty: it needs classes: [{name, share, input_tokens, max_tokens}, ...]")
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f MixFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%v (a class takes name, share or rate, input_tokens or dataset and dataset_format, input_tokens_stddev, max_tokens, max_tokens_stddev, model, priority, extra_body, headers, slo)", err)
	}
	lines := classLines(&doc)
	if len(f.Classes) == 0 {
		return nil, errors.New("no classes: the file needs classes: [{name, share, input_tokens, max_tokens}, ...]")
	}
	if len(f.Classes) > maxClasses {
		return nil, fmt.Errorf("%d classes is more than %d", len(f.Classes), maxClasses)
	}
	seen := map[string]bool{}
	rates := f.Classes[0].Rate != 0
	total, rateSum := 0.0, 0.0
	for i := range f.Classes {
		c := &f.Classes[i]
		if i < len(lines) {
			c.Line = lines[i]
		}
		switch {
		case c.Rate != 0 && c.Share != 0:
			return nil, fmt.Errorf("line %d: class %d gives both share and rate: give one", c.Line, i+1)
		case rates != (c.Rate != 0):
			return nil, fmt.Errorf("line %d: class %d: every class gives a share, or every class a rate, not some of each", c.Line, i+1)
		case rates && !(c.Rate > 0 && c.Rate <= 1e6):
			return nil, fmt.Errorf("line %d: class %d: rate %g must be above 0 and at most 1000000 a second", c.Line, i+1, c.Rate)
		}
		rateSum += c.Rate
	}
	for i := range f.Classes {
		c := &f.Classes[i]
		if rates {
			c.Share = c.Rate / rateSum
		}
		if err := c.check(seen); err != nil {
			return nil, fmt.Errorf("line %d: class %d: %w", c.Line, i+1, err)
		}
		total += c.Share
	}
	if math.Abs(total-1) > 1e-6 {
		return nil, fmt.Errorf("the classes' shares add up to %g: they must add up to 1", total)
	}
	return &f, nil
}

// Rates reports whether the classes give rates rather than shares, and
// their sum.
func (f *MixFile) Rates() (bool, float64) {
	sum := 0.0
	for _, c := range f.Classes {
		sum += c.Rate
	}
	return sum > 0, sum
}

// classLines is the line each class of the document starts at.
func classLines(doc *yaml.Node) []int {
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "classes" && root.Content[i+1].Kind == yaml.SequenceNode {
			var out []int
			for _, n := range root.Content[i+1].Content {
				out = append(out, n.Line)
			}
			return out
		}
	}
	return nil
}

// OwnBodyKey says whether an extra body's key is one knee writes itself,
// and why, naming what sets it instead. Keys are matched without regard
// to case: a server's JSON may read them so (Go's does, Python's pydantic
// in vLLM does not), and "Model" would then override knee's own "model"
// on some servers and not others.
func OwnBodyKey(k string) (why string, own bool) {
	switch strings.ToLower(k) {
	case "model":
		return "knee names the model: use --model", true
	case "stream":
		return "knee always streams", true
	case "messages", "prompt", "input":
		return "knee writes the prompts: use --prompt, --input-tokens or --dataset", true
	case "max_tokens", "max_completion_tokens", "max_output_tokens":
		return "knee writes the answer's length: use --max-tokens", true
	}
	return "", false
}

// headerName is an HTTP header name: RFC 9110's token characters.
var headerName = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")

// CheckHeader checks a header a request is to carry (--header, a mix
// class's headers): a name of RFC 9110's token characters, a value with
// no control character (a CR or LF would end the header and start
// another), and not one of the headers that frame the request, which knee
// writes itself (a Content-Length of the user's left every server waiting
// for a body that never came).
func CheckHeader(name, value string) error {
	if !headerName.MatchString(name) || strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
		return fmt.Errorf("header %q is not a valid header (a name of letters, digits and !#$%%&'*+-.^_`|~; a value without control characters)", name)
	}
	switch strings.ToLower(name) {
	case "content-length", "transfer-encoding":
		return fmt.Errorf("header %q frames the request, which knee writes itself", name)
	}
	return nil
}

func (c *MixClass) check(seen map[string]bool) error {
	switch {
	case !className.MatchString(c.Name):
		return fmt.Errorf("name %q: letters, digits, '_', '.' and '-', up to 63", c.Name)
	case seen[c.Name]:
		return fmt.Errorf("name %q is given twice", c.Name)
	case !(c.Share > 0 && c.Share <= 1):
		return fmt.Errorf("%s: share %g must be above 0 and at most 1", c.Name, c.Share)
	case c.Dataset != "" && c.InputTokens != 0:
		return fmt.Errorf("%s: a dataset's lines are the prompts: give input_tokens or dataset, not both", c.Name)
	case c.Dataset == "" && c.DatasetFormat != "":
		return fmt.Errorf("%s: dataset_format without a dataset", c.Name)
	case c.Dataset == "" && (c.InputTokens < 1 || c.InputTokens > 10_000_000):
		return fmt.Errorf("%s: input_tokens %d must be between 1 and 10000000 (or give a dataset)", c.Name, c.InputTokens)
	case c.MaxTokens < 1 || c.MaxTokens > MaxOutputTokens:
		return fmt.Errorf("%s: max_tokens %d must be between 1 and %d", c.Name, c.MaxTokens, MaxOutputTokens)
	case !(c.InputStddev >= 0 && c.InputStddev <= 1e7) || !(c.MaxTokensStddev >= 0 && c.MaxTokensStddev <= 1e7):
		return fmt.Errorf("%s: a stddev must be a number of tokens, at least 0", c.Name)
	case c.Priority != nil && (*c.Priority < -1_000_000 || *c.Priority > 1_000_000):
		return fmt.Errorf("%s: priority %d is out of range", c.Name, *c.Priority)
	}
	seen[c.Name] = true
	for k := range c.ExtraBody {
		if _, own := OwnBodyKey(k); own {
			return fmt.Errorf("%s: extra_body sets %q, which knee writes itself (use the class's own keys)", c.Name, k)
		}
		if strings.EqualFold(k, "priority") && c.Priority != nil {
			return fmt.Errorf("%s: priority is given twice (as priority and in extra_body)", c.Name)
		}
	}
	for k, v := range c.Headers {
		if err := CheckHeader(k, v); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	return nil
}

// BodyField is a field a request's body carries beyond what knee writes:
// its key and JSON value.
type BodyField struct {
	Key   string
	Value json.RawMessage
}

// Fields are the class's own body fields, sorted by key: its priority
// and its extra_body.
func (c *MixClass) Fields() ([]BodyField, error) {
	var out []BodyField
	if c.Priority != nil {
		out = append(out, BodyField{"priority", json.RawMessage(fmt.Sprint(*c.Priority))})
	}
	for k, v := range c.ExtraBody {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: extra_body %q: %v", c.Name, k, err)
		}
		out = append(out, BodyField{k, b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// ClassSource is a class ready to send: its requests' source and what
// every one of its requests carries.
type ClassSource struct {
	Source  Source
	Model   string
	Fields  []BodyField
	Headers [][2]string
}

// Mix is a load's classes in one source: arrival i goes to a class by
// the smooth weighted round robin of their shares (each step every class
// earns its share, the one most owed is served and pays 1), so after
// any n arrivals every class has had its share of n to within one, and
// the order is the same for every run of the same file. A request
// carries its class (Class, 1-based) and the class's target.
type Mix struct {
	Shares  []float64
	Classes []ClassSource

	st *mixState
}

// mixState is the order drawn so far, shared by a mix's copies.
type mixState struct {
	mu     sync.Mutex
	order  []mixSlot
	credit []float64
	count  []int32
}

// mixSlot is arrival i's class and its index among that class's.
type mixSlot struct{ class, index int32 }

// NewMix returns the mix of classes with those shares.
func NewMix(shares []float64, classes []ClassSource) Mix {
	st := &mixState{credit: make([]float64, len(shares)), count: make([]int32, len(shares))}
	return Mix{Shares: shares, Classes: classes, st: st}
}

// WithClasses is the same mix order with other sources (a level's).
func (m Mix) WithClasses(classes []ClassSource) Mix {
	m.Classes = classes
	return m
}

// slot is arrival i's class and index within it, drawing the order as
// far as i (it is a function of the shares alone).
func (m Mix) slot(i int) mixSlot {
	st := m.st
	st.mu.Lock()
	defer st.mu.Unlock()
	for len(st.order) <= i {
		best := 0
		for c, s := range m.Shares {
			st.credit[c] += s
			if st.credit[c] > st.credit[best]+1e-12 {
				best = c
			}
		}
		st.credit[best]--
		st.order = append(st.order, mixSlot{int32(best), st.count[best]})
		st.count[best]++
	}
	return st.order[i]
}

// Class is the class (0-based) arrival i belongs to.
func (m Mix) Class(i int) int { return int(m.slot(i).class) }

// Request implements Source.
func (m Mix) Request(i int) Request {
	sl := m.slot(i)
	c := m.Classes[sl.class]
	r := c.Source.Request(int(sl.index))
	r.Class = int(sl.class) + 1
	r.Model, r.Fields, r.Headers = c.Model, c.Fields, c.Headers
	return r
}
