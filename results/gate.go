package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// noFigure says why name is no figure a gate knows: the metric it is a
// typo of or what is wrong with it, else every figure a gate takes.
func noFigure(name string, err error) error {
	if u := (*unknownMetric)(nil); !errors.As(err, &u) || u.near != "" {
		return err
	}
	var scalars []string
	for _, m := range Metrics {
		if !m.Latency() {
			scalars = append(scalars, m.Name)
		}
	}
	return fmt.Errorf("no figure %q; knee gates a latency at p50, p90, p95 or p99 (%s), %s, slo_knee and saturation",
		name, strings.Join(Latencies(), ", "), strings.Join(scalars, ", "))
}

// A GateRule is one line of a regression gate: how far a figure may move
// the wrong way from the baseline to the candidate.
type GateRule struct {
	// Text is the rule as written, e.g. "ttft_sched.p95:+10%".
	Text string `json:"rule"`
	// Figure is a figure's name (FigureNames), or "slo_knee" or
	// "saturation".
	Figure string `json:"figure"`
	// Allowed is how far the figure may move the wrong way, in Unit: "%"
	// of the baseline, "pp" (percentage points, for errors), "ms"
	// (absolute, for latencies) or "level" (for knees).
	Allowed float64 `json:"allowed"`
	Unit    string  `json:"unit"`
}

// gateRuleForm is a rule: a figure, a colon, a signed amount and a unit.
var gateRuleForm = regexp.MustCompile(`^\s*([a-z0-9_.]+)\s*:\s*([+-])\s*([0-9]*\.?[0-9]+)\s*(%|pp|ms|levels?)\s*$`)

// ParseGateRules reads rules separated by commas, e.g.
// "ttft_sched.p95:+10%, throughput:-5%, slo_knee:-1 level, errors:+0.5pp".
// The sign is the direction the figure gets worse in: up for latencies
// and errors, down for throughput, goodput and knees.
func ParseGateRules(spec string) ([]GateRule, error) {
	var rules []GateRule
	known := FigureNames()
	for part := range strings.SplitSeq(spec, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		m := gateRuleForm.FindStringSubmatch(part)
		if m == nil {
			return nil, fmt.Errorf("gate rule %q: write it as FIGURE:±AMOUNT UNIT, e.g. ttft_sched.p95:+10%%, throughput:-5%%, slo_knee:-1 level, errors:+0.5pp", strings.TrimSpace(part))
		}
		name, sign, unit := m[1], m[2], m[4]
		if unit == "levels" {
			unit = "level"
		}
		amount, err := strconv.ParseFloat(m[3], 64)
		if err != nil || math.IsInf(amount, 0) || amount > 1e6 {
			return nil, fmt.Errorf("gate rule %q: %q is not an amount", strings.TrimSpace(part), m[3])
		}
		knee := name == "slo_knee" || name == "saturation"
		if m, err := ParseMeasure(name); !knee && err == nil {
			// One spelling, whichever was written (ttft_sched_p95 too).
			name = m.String()
		} else if !knee && !slices.Contains(known, name) {
			return nil, fmt.Errorf("gate rule %q: %w", strings.TrimSpace(part), noFigure(name, err))
		}
		r := GateRule{Text: strings.TrimSpace(part), Figure: name, Allowed: amount, Unit: unit}
		switch {
		case knee != (unit == "level"):
			return nil, fmt.Errorf("gate rule %q: a knee moves by levels (slo_knee:-1 level), and only a knee does", r.Text)
		case unit == "pp" && name != "errors":
			return nil, fmt.Errorf("gate rule %q: percentage points are for errors (errors:+0.5pp); use %% for a relative change", r.Text)
		case unit == "ms" && !strings.Contains(name, ".p"):
			return nil, fmt.Errorf("gate rule %q: ms is for a latency percentile; use %% for %s", r.Text, name)
		}
		worseUp := !knee && !HigherIsBetter(name)
		if (sign == "+") != worseUp {
			dir := "up"
			if !worseUp {
				dir = "down"
			}
			return nil, fmt.Errorf("gate rule %q: %s gets worse going %s, so its rule says how far it may go %s (sign %s)",
				r.Text, name, dir, dir, map[bool]string{true: "+", false: "-"}[worseUp])
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("no gate rules in %q", spec)
	}
	return rules, nil
}

// Gate verdicts.
const (
	GateHolds = "holds"
	// GateInconclusive: the candidate is past the allowance, but not by
	// more than the interval of the difference: the repeats cannot tell a
	// regression from noise. The gate cannot vouch for it: it does not
	// pass unless inconclusive checks are allowed.
	GateInconclusive = "inconclusive"
	GateFails        = "FAILS"
	// GateUnjudged: a level's client was unhealthy, or the level failed,
	// in one of the files: the gate cannot vouch for it, and fails.
	GateUnjudged = "unjudged"
)

// GateCheck is one rule at one level (or, for a knee, the sweep).
type GateCheck struct {
	Rule      string   `json:"rule"`
	Load      *float64 `json:"load,omitempty"`
	Baseline  *float64 `json:"baseline"`
	Candidate *float64 `json:"candidate"`
	// Change is the candidate's move, in the rule's unit.
	Change *float64 `json:"change"`
	Unit   string   `json:"unit"`
	// Noise is the half-width of the 95% interval of the difference, in
	// the figure's own units (0: one repeat each, no interval).
	Noise   float64 `json:"noise"`
	Verdict string  `json:"verdict"`
	Why     string  `json:"why,omitempty"`
}

// GateResult is a gate's every check and whether it passed.
type GateResult struct {
	Checks []GateCheck `json:"checks"`
	Passed bool        `json:"passed"`
	// Inconclusive says some check could not tell a move past its
	// allowance from noise (and none failed or went unjudged).
	Inconclusive bool `json:"inconclusive,omitempty"`
	// Notes say what the comparison rests on (one repeat: no interval).
	Notes []string `json:"notes,omitempty"`
}

// GateMismatch names what two files measured differently: they cannot
// be gated against each other.
type GateMismatch struct{ Fields []string }

func (m *GateMismatch) Error() string {
	return "the two files measured different things: " + strings.Join(m.Fields, "; ")
}

// gateFields are what two gated files must agree on, with how to read
// each from a sweep.
var gateFields = []struct {
	name string
	of   func(*Sweep) any
}{
	{"model", func(s *Sweep) any { return s.Config.Model }},
	{"endpoint", func(s *Sweep) any { return s.Config.Endpoint }},
	{"workload", func(s *Sweep) any { return s.Config.Workload }},
	{"axis", func(s *Sweep) any { return s.Axis }},
	{"input_tokens", func(s *Sweep) any { return s.Config.InputTokens }},
	{"max_tokens", func(s *Sweep) any { return s.Config.MaxTokens }},
	{"input_tokens_stddev", func(s *Sweep) any { return s.Config.InputStddev }},
	{"max_tokens_stddev", func(s *Sweep) any { return s.Config.OutputStddev }},
	{"prefix", func(s *Sweep) any { return fmt.Sprint(s.Config.PrefixTokens, "/", s.Config.PrefixPool) }},
	{"dataset", func(s *Sweep) any { return filepath.Base(s.Config.Dataset) + " " + s.Config.DatasetFormat }},
	{"mix", func(s *Sweep) any { return filepath.Base(s.Config.Mix) }},
	{"images", func(s *Sweep) any { return s.Config.Images }},
	{"tools", func(s *Sweep) any { return s.Config.Tools + " " + s.Config.ToolChoice }},
	{"batch", func(s *Sweep) any { return s.Config.Batch }},
	{"history", func(s *Sweep) any { return s.Config.History }},
	{"ignore_eos", func(s *Sweep) any { return s.Config.IgnoreEOS }},
	{"burstiness", func(s *Sweep) any { return s.Config.Burstiness }},
	{"ramp_up", func(s *Sweep) any {
		return fmt.Sprint(s.Config.RampUpS, " ", s.Config.RampUpStrategy, " ", s.Config.RampUpFrom)
	}},
	{"voice", func(s *Sweep) any { b, _ := json.Marshal(s.Config.Voice); return string(b) }},
	{"conversations", func(s *Sweep) any { b, _ := json.Marshal(s.Config.Conversations); return string(b) }},
}

// GateFieldNames lists what two gated files must agree on (and
// --gate-ignore may excuse).
func GateFieldNames() []string {
	out := make([]string, 0, len(gateFields)+1)
	for _, f := range gateFields {
		out = append(out, f.name)
	}
	return append(out, "slo")
}

// Mismatch names what base and cand measured differently, leaving out
// the fields in ignore; the SLO counts only when a knee is gated.
func Mismatch(base, cand *Sweep, rules []GateRule, ignore []string) *GateMismatch {
	var diff []string
	for _, f := range gateFields {
		if slices.Contains(ignore, f.name) {
			continue
		}
		if a, b := fmt.Sprint(f.of(base)), fmt.Sprint(f.of(cand)); a != b {
			diff = append(diff, fmt.Sprintf("%s %q against %q", f.name, a, b))
		}
	}
	kneeRule := slices.ContainsFunc(rules, func(r GateRule) bool { return r.Unit == "level" })
	if kneeRule && !slices.Contains(ignore, "slo") {
		if a, b := base.SLO.BoundsText(), cand.SLO.BoundsText(); a != b {
			diff = append(diff, fmt.Sprintf("slo %q against %q (a knee is judged by it)", a, b))
		}
	}
	if len(commonLoads(base, cand)) == 0 {
		diff = append(diff, "no load level in common")
	}
	if len(diff) == 0 {
		return nil
	}
	return &GateMismatch{Fields: diff}
}

// commonLoads are the loads both sweeps measured, in the baseline's order.
func commonLoads(base, cand *Sweep) []float64 {
	var out []float64
	for _, l := range base.Levels {
		if slices.ContainsFunc(cand.Levels, func(c Level) bool { return c.Load == l.Load }) {
			out = append(out, l.Load)
		}
	}
	return out
}
