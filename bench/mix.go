package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/summary"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/results/input"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
)

// MaxMixBytes bounds a --mix file.
const MaxMixBytes = 1 << 20

// mixWorkload is a --mix file's classes, ready to size and send.
type mixWorkload struct {
	Path    string
	file    *workload.MixFile
	classes []mixClass
	order   workload.Mix
	// vary is the class --vary raises (-1: none), others the other
	// classes' rates together.
	vary   int
	others float64
}

// mixLevel is a mix's source for one level, the shares it deals, and its
// dataset classes' sources (nil for a synthetic class), whose use moves
// each class's next level on.
type mixLevel struct {
	src    workload.Mix
	shares []float64
	taken  []*trackedDataset
}

// mixClass is one class: its prompts (sized once the target is known),
// what its requests carry, and its own SLO.
type mixClass struct {
	spec workload.MixClass
	syn  workload.Synthetic
	// data, for a class of a dataset, is its file; ds the entries sized
	// and sampled, next where the next level starts in them.
	data    *DatasetFile
	ds      workload.Dataset
	next    int
	target  workload.ClassSource
	goodput summary.Goodput
	slo     []results.Bound
}

// readMix reads and checks a --mix file: every error names the line.
func (sp *Spec) readMix(ctx context.Context, load *driver.Load) (*mixWorkload, error) {
	for _, f := range []string{"dataset", "input-tokens", "prompt", "image-count", "batch-size", "documents", "prefix-tokens", "input-tokens-stddev", "max-tokens-stddev", "range-ratio", "tokenizer"} {
		if sp.given(f) {
			return nil, fmt.Errorf("--mix gives each class its own prompts: drop --%s (a class takes input_tokens, max_tokens and their stddevs)", f)
		}
	}
	if sp.Workload != "requests" {
		return nil, errors.New("--mix sends single requests of each class: calls (--workload voice or conversations) are not mixed yet")
	}
	data := sp.MixData
	if data == nil {
		var err error
		if data, err = input.Read(ctx, sp.Mix, MaxMixBytes, "a mix file"); err != nil {
			return nil, fmt.Errorf("--mix: %w", err)
		}
	}
	f, err := workload.ParseMix(data)
	if err != nil {
		return nil, fmt.Errorf("--mix %s: %w", sp.Mix, err)
	}
	m := &mixWorkload{Path: sp.Mix, file: f, vary: -1}
	var shares []float64
	for i, c := range f.Classes {
		mc := mixClass{spec: c}
		mc.syn = workload.Synthetic{Tokens: c.InputTokens, MaxTokens: c.MaxTokens, Seed: sp.Seed ^ uint64(i+1)*0x9e3779b97f4a7c15,
			Spread: workload.Spread{InputStddev: c.InputStddev, OutputStddev: c.MaxTokensStddev}}
		if c.Dataset != "" {
			data, err := sp.classDataset(ctx, c)
			if err != nil {
				return nil, fmt.Errorf("--mix %s: line %d: %s: %w", sp.Mix, c.Line, c.Name, err)
			}
			mc.data = data
		}
		fields, err := c.Fields()
		if err != nil {
			return nil, fmt.Errorf("--mix %s: line %d: %w", sp.Mix, c.Line, err)
		}
		mc.target = workload.ClassSource{Model: c.Model, Fields: fields}
		for k, v := range c.Headers {
			mc.target.Headers = append(mc.target.Headers, [2]string{k, v})
		}
		sort.Slice(mc.target.Headers, func(a, b int) bool { return mc.target.Headers[a][0] < mc.target.Headers[b][0] })
		if c.SLO != "" {
			bounds, _, err := results.ParseBounds(c.SLO)
			if err != nil {
				return nil, fmt.Errorf("--mix %s: line %d: %s: slo: %w", sp.Mix, c.Line, c.Name, err)
			}
			mc.slo = bounds
			mc.goodput = goodputOf(bounds)
		}
		m.classes = append(m.classes, mc)
		shares = append(shares, c.Share)
	}
	m.order = workload.NewMix(shares, nil)
	return m, sp.mixLoad(m, load)
}

// goodputOf is the per-request bounds an SLO's percentile bounds give: a
// request is good when it meets each bound's value (bounds on figures a
// request has no one value of, ITL and queue wait, are left out).
func goodputOf(bounds []results.Bound) summary.Goodput {
	g := summary.Goodput{}
	for _, b := range bounds {
		if m, ok := results.MetricNamed(b.Metric); ok && m.Goodput {
			g[m.Field] = time.Duration(b.Ms * float64(time.Millisecond))
		}
	}
	return g
}

// size sizes every class's prompts against the server, with one
// calibration for all: a synthetic class's filler, a dataset class's
// entries (counted and sampled as --dataset's are).
func (m *mixWorkload) size(s *Series, p Prober, noCalibrate bool) ([]string, error) {
	var notes []string
	synthetic := false
	for i := range m.classes {
		c := &m.classes[i]
		if c.data == nil {
			synthetic = true
			continue
		}
		ds, note, err := c.data.size(p, c.spec.MaxTokens, 0, s.Load.Seed)
		if err != nil {
			return nil, fmt.Errorf("class %s: %w", c.spec.Name, err)
		}
		ds.Blocks.Nonce = s.Nonce
		c.ds = ds
		notes = append(notes, c.spec.Name+": "+note)
	}
	if !synthetic {
		return notes, nil
	}
	if noCalibrate {
		return append(notes, "--no-calibrate: every synthetic class's prompts are knee's own filler counts"), nil
	}
	cal := s.calibrate(p)
	notes = append(notes, cal.String())
	for i := range m.classes {
		c := &m.classes[i]
		if c.data != nil {
			continue
		}
		fit, note := SizedPrompts(p, cal, c.syn)
		c.syn = fit
		notes = append(notes, c.spec.Name+": "+note)
	}
	return notes, nil
}

// classDataset reads a class's dataset: single requests, read before
// the first request as --dataset is.
func (sp *Spec) classDataset(ctx context.Context, c workload.MixClass) (*DatasetFile, error) {
	path := c.Dataset
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(sp.Mix), path)
	}
	format := c.DatasetFormat
	if format == "" {
		format = "auto"
	}
	d := DatasetSpec{Path: path, Format: format, MinTokens: -1, MaxPrompt: -1, MaxContext: -1, BlockTokens: workload.DefaultTraceBlockTokens, Speedup: 1,
		urlBase: sp.serveBase, serve: sp.serve}
	f, err := d.Read(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case f.Parsed.Timed:
		return nil, errors.New("its dataset is a trace (timestamped lines): a class's arrivals come from the mix's one schedule")
	case f.Parsed.Sessions:
		return nil, errors.New("its dataset holds sessions: a class sends single requests, not conversations")
	case f.images != nil && !sp.Endpoint.Kind().Chat():
		return nil, fmt.Errorf("its dataset names images, which go in messages (--endpoint %s), not to %s", kind.Where(kind.Kind.Chat), sp.Endpoint)
	}
	return f, nil
}

// advance moves each dataset class past the entries a level took, so
// the next level's prompts are new to the server's cache.
func (m *mixWorkload) advance(taken []*trackedDataset) {
	for i, t := range taken {
		if t != nil {
			m.classes[i].next = t.Offset + t.used()
		}
	}
}

// level is the mix's source for one level: every class's prompts in the
// level's own words (the nonce, and the class), in the one order; with
// --vary, the varied class at rate and the others at theirs, dealt in
// the shares that makes.
func (m *mixWorkload) level(nonce string, rate float64) mixLevel {
	sources := make([]workload.ClassSource, len(m.classes))
	shares := make([]float64, len(m.classes))
	taken := make([]*trackedDataset, len(m.classes))
	for i, c := range m.classes {
		syn := c.syn
		syn.Nonce = nonce + "/" + c.spec.Name
		src := c.target
		src.Source = syn
		if c.data != nil {
			ds := c.ds
			ds.Offset = c.next
			taken[i] = &trackedDataset{Dataset: ds, images: c.data.images}
			src.Source = taken[i]
		}
		sources[i] = src
		shares[i] = c.spec.Share
	}
	if m.vary < 0 {
		return mixLevel{m.order.WithClasses(sources), shares, taken}
	}
	total := m.others + rate
	for i, c := range m.classes {
		shares[i] = c.spec.Rate / total
		if i == m.vary {
			shares[i] = rate / total
		}
	}
	return mixLevel{workload.NewMix(shares, sources), shares, taken}
}

// summaryClasses are the classes as a level's summary takes them, with
// the level's shares.
func (m *mixWorkload) summaryClasses(shares []float64) []summary.Class {
	out := make([]summary.Class, len(m.classes))
	for i, c := range m.classes {
		out[i] = summary.Class{Name: c.spec.Name, Share: shares[i], Goodput: c.goodput}
	}
	return out
}

// mixLoad reads the load a mix of rates sets: their sum for a run; a
// sweep varies one class's (--vary), the others fixed.
func (sp *Spec) mixLoad(m *mixWorkload, load *driver.Load) error {
	rates, sum := m.file.Rates()
	if rates && !(sum <= maxRateBound) {
		// The whole load's bound holds for the classes' sum: two classes
		// at 10^6/s each are the --rate 2e6 it refuses.
		return fmt.Errorf("--mix %s: its classes' rates add up to %g/s, more than the %d/s a load may ask", sp.Mix, sum, maxRateBound)
	}
	if sp.Vary != "" {
		m.vary = slices.IndexFunc(m.classes, func(c mixClass) bool { return c.spec.Name == sp.Vary })
		switch {
		case m.vary < 0:
			return fmt.Errorf("--vary %s: the mix has no such class", sp.Vary)
		case !rates:
			return fmt.Errorf("--vary %s: the mix's classes must give their rates (rate: N a second), so the others keep theirs while it varies", sp.Vary)
		case sp.given("concurrency"):
			return errors.New("--vary raises a class's rate: give --rates, the varied class's")
		}
		m.others = sum - m.classes[m.vary].spec.Rate
		return nil
	}
	if !rates {
		return nil
	}
	if sp.given("rate") || sp.given("rates") || sp.given("concurrency") {
		return fmt.Errorf("--mix %s: its classes give their rates, so the load is their sum (%g/s): drop --rate, --rates and --concurrency (a sweep raises one class with --vary CLASS --rates ...)", sp.Mix, sum)
	}
	sp.Rate, sp.Concurrency = sum, 0
	load.Rate, load.Concurrency = sum, 0
	return nil
}

// String says what the mix is, for a run's configuration.
func (m *mixWorkload) String() string {
	parts := make([]string, len(m.classes))
	for i, c := range m.classes {
		size := fmt.Sprintf("%d in, %d out", c.spec.InputTokens, c.spec.MaxTokens)
		if c.data != nil {
			size = fmt.Sprintf("dataset %s, max_tokens %d where a line has none", c.data.Path, c.spec.MaxTokens)
		}
		s := fmt.Sprintf("%s %.0f%% (%s", c.spec.Name, c.spec.Share*100, size)
		switch {
		case i == m.vary:
			s = fmt.Sprintf("%s at the level's rate (%s", c.spec.Name, size)
		case c.spec.Rate > 0:
			s = fmt.Sprintf("%s %g/s (%s", c.spec.Name, c.spec.Rate, size)
		}
		if c.spec.Model != "" {
			s += ", model " + c.spec.Model
		}
		if c.spec.Priority != nil {
			s += fmt.Sprintf(", priority %d", *c.spec.Priority)
		}
		if c.spec.SLO != "" {
			s += ", slo " + c.spec.SLO
		}
		parts[i] = s + ")"
	}
	return "mix " + m.Path + ": " + strings.Join(parts, " · ")
}

// judge says on each class's summary what the class is and whether it
// met its own SLO.
func (m *mixWorkload) judge(res *results.Run) {
	for _, c := range m.classes {
		r := res.Classes[c.spec.Name]
		if r == nil {
			continue
		}
		// A class shares its level's window and identity.
		r.StartedAt, r.WindowStartedAt, r.Shard, r.Interrupted = res.StartedAt, res.WindowStartedAt, res.Shard, res.Interrupted
		mc := &results.MixClass{Share: c.spec.Share, Model: c.spec.Model, Priority: c.spec.Priority, SLO: c.spec.SLO, Varied: m.vary >= 0 && m.classes[m.vary].spec.Name == c.spec.Name}
		mc.JudgeClass(r, c.slo)
		r.MixClass = mc
	}
	res.Fairness = results.JainFairness(res.Classes)
}
