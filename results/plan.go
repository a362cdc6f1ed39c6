package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Plan is the answer to a capacity question (knee plan): for a workload at
// a target load and its SLOs, every configuration searched, whether it
// meets them, with how many replicas, at what cost and with what room to
// spare.
type Plan struct {
	SchemaVersion int         `json:"schema_version"`
	Kind          string      `json:"kind"`
	Config        Config      `json:"config"`
	Environment   Environment `json:"environment"`
	// Axis is "rate" (requests or calls per second) or "concurrency"
	// (streams); Target the load to serve, 0 when the plan finds the
	// largest load each fleet holds (FindMax).
	Axis    string  `json:"axis"`
	Target  float64 `json:"target,omitempty"`
	FindMax bool    `json:"find_max,omitempty"`
	SLO     SLO     `json:"slo"`
	// WindowS is each prediction's window in simulated seconds.
	WindowS float64 `json:"window_s"`
	// Prices are per GPU-hour, by GPU; PriceSource says whose they are.
	Prices      map[string]float64 `json:"prices"`
	PriceSource string             `json:"price_source"`
	Rows        []PlanRow          `json:"rows"`
	// Predictions counts the levels predicted to answer.
	Predictions int `json:"predictions"`
	// Disaggregated says prefill/decode splits were weighed beside
	// aggregated replicas (rows with PrefillReplicas set).
	Disaggregated bool `json:"disaggregated,omitempty"`
	// Caveat, when set, says why the plan's figures are not to be
	// planned on (its model's calibration was judged poor); it is said
	// before the table, not among the notes.
	Caveat string `json:"caveat,omitempty"`
	// Day, for a plan over a day of traffic (--trace), is its answer
	// through the day under autoscaling.
	Day         *DayPlan `json:"day,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	Interrupted bool     `json:"interrupted,omitempty"`
}

// PlanKind marks a plan file.
const PlanKind = "plan"

// PlanRow is one configuration: Replicas replicas of Config (TP GPUs of
// GPU each, serving Model) behind a Routing policy.
type PlanRow struct {
	Config   string `json:"config"`
	GPU      string `json:"gpu"`
	TP       int    `json:"tp"`
	Model    string `json:"model"`
	Replicas int    `json:"replicas,omitempty"`
	GPUs     int    `json:"gpus,omitempty"`
	// PrefillReplicas and DecodeReplicas, when set, split Replicas into a
	// disaggregated model's pools, its prompts' KV shipped over a link of
	// KVLinkGbps into each decode replica.
	PrefillReplicas int     `json:"prefill_replicas,omitempty"`
	DecodeReplicas  int     `json:"decode_replicas,omitempty"`
	KVLinkGbps      float64 `json:"kv_link_gbps,omitempty"`
	Routing         string  `json:"routing,omitempty"`
	// Meets says the configuration meets every SLO at the target (or,
	// finding the largest load, at some load); Why says why not.
	Meets bool   `json:"meets"`
	Why   string `json:"why,omitempty"`
	// PerReplica is the largest load one replica meets the SLO at (0 for
	// a split, none of whose replicas serves the load alone), and
	// Headroom the largest the whole configuration does (found by
	// bisection to within Step of the load).
	PerReplica float64 `json:"per_replica_capacity"`
	// Limit is what limits one replica at that capacity — compute, memory
	// bandwidth, all-reduce, KV capacity or batch slots — LimitShare the
	// share of the time that shows it, and LimitDetail how its scheduler
	// steps there show it.
	Limit       string  `json:"replica_limit,omitempty"`
	LimitShare  float64 `json:"replica_limit_share,omitempty"`
	LimitDetail string  `json:"replica_limit_detail,omitempty"`
	Headroom    float64 `json:"headroom"`
	Step        float64 `json:"step"`
	// AtTarget are the predicted figures at the target (or at Headroom,
	// finding the largest load).
	AtTarget *PlanFigures `json:"at_target,omitempty"`
	// CostPerHour is GPUs times the GPU's price; CostPerMOutputTokens the
	// cost of a million output tokens at the target's throughput (0: no
	// price for the GPU).
	CostPerHour          float64 `json:"cost_per_hour,omitempty"`
	CostPerMOutputTokens float64 `json:"cost_per_m_output_tokens,omitempty"`
	// CostPerMPromptTokens is a pooling endpoint's: the cost of a million
	// prompt tokens read (embedded, ranked), as such APIs are priced; it
	// generates no output tokens.
	CostPerMPromptTokens float64 `json:"cost_per_m_prompt_tokens,omitempty"`
	// KVSequences is how many sequences of the workload's mean size one
	// replica's KV cache holds.
	KVSequences int `json:"kv_sequences,omitempty"`
	// MaxModelLen, when set, is the longest --max-model-len vLLM starts
	// the configuration with: its KV cache cannot hold one request of the
	// model's whole context, and vLLM refuses to start at that length.
	MaxModelLen int `json:"max_model_len,omitempty"`
	// Seeds is how many arrival schedules the replicas were checked on at
	// the target, SeedsMet on how many the fewest that met the first one
	// met it, and Cliff, when that was not all, says so and how many
	// replicas meet it on all (which Replicas then is).
	Seeds    int    `json:"seeds,omitempty"`
	SeedsMet int    `json:"seeds_met,omitempty"`
	Cliff    string `json:"cliff,omitempty"`
	// ModeEdge, when set, says the binding bound sits on a mode boundary
	// at the target (a token-gap percentile the stalled steps nearly
	// reach), and how many replicas clear it.
	ModeEdge string `json:"mode_edge,omitempty"`
	// Calibration is how the GPU's cost model was tuned: measured (a
	// calibrated models file), fitted (its family fitted to published
	// measurements) or a priori (data-sheet figures and default
	// efficiencies, never checked against a measurement).
	Calibration string `json:"calibration,omitempty"`
	Predictions int    `json:"predictions"`
}

// PlanFigures are a configuration's predicted figures at one load.
type PlanFigures struct {
	Load float64 `json:"load"`
	// Bounds are the SLO's metrics, by the bounds' Key (read with Bound).
	Bounds           map[string]float64 `json:"bounds"`
	TTFTP50          float64            `json:"ttft_p50_ms"`
	TTFTP95          float64            `json:"ttft_p95_ms"`
	TPOTP50          float64            `json:"tpot_p50_ms"`
	TPOTP95          float64            `json:"tpot_p95_ms"`
	E2EP95           float64            `json:"e2e_p95_ms"`
	OutputTokensPerS float64            `json:"output_tokens_per_s"`
	// PromptTokensPerS is a pooling endpoint's throughput in tokens.
	PromptTokensPerS float64 `json:"prompt_tokens_per_s,omitempty"`
	RequestsPerS     float64 `json:"requests_per_s"`
	ErrorRate        float64 `json:"error_rate"`
	// BindingBound is the SLO bound nearest its limit there and
	// BindingValue its value (ms): what the fleet would break first.
	BindingBound string  `json:"binding_bound,omitempty"`
	BindingValue float64 `json:"binding_value_ms,omitempty"`
	// BindingClass, for a mix, is the class closest to its own SLO there,
	// and BindingSlack the share of its nearest bound it had left.
	BindingClass string  `json:"binding_class,omitempty"`
	BindingSlack float64 `json:"binding_slack,omitempty"`
	// JoulesPerOutputToken and PowerW are the fleet's predicted energy a
	// token and mean draw there, from the presets' power model (0: the
	// GPU gives no power figures).
	JoulesPerOutputToken float64 `json:"joules_per_output_token,omitempty"`
	PowerW               float64 `json:"power_w,omitempty"`
	// Phases, for a disaggregated split, is its time to first token by
	// phase and how busy each part was.
	Phases *Phases `json:"phases,omitempty"`
}

// Bound is b's figure there, and whether there is one; files written
// while the bounds were keyed by their --slo spelling read alike.
func (f *PlanFigures) Bound(b Bound) (float64, bool) {
	if f == nil {
		return 0, false
	}
	if v, ok := f.Bounds[b.Key()]; ok {
		return v, true
	}
	v, ok := f.Bounds[b.String()]
	return v, ok
}

// BoundText is a bound's key as knee spells it for people now
// ("itl.p95:50"); a key it cannot read is shown as written.
func BoundText(key string) string {
	if b, _, err := ParseBounds(key); err == nil && len(b) == 1 {
		return b[0].String()
	}
	return key
}

// Calibration states of a plan row's GPU.
const (
	CalibrationMeasured = "measured"
	CalibrationFitted   = "fitted"
	CalibrationApriori  = "a priori"
)

// PlanCSVHeader names the columns of a plan's CSV.
var PlanCSVHeader = []string{"config", "gpu", "tp", "model", "replicas", "gpus", "routing", "meets", "why", "per_replica_capacity",
	"headroom", "step", "ttft_p50_ms", "ttft_p95_ms", "tpot_p50_ms", "tpot_p95_ms", "e2e_p95_ms", "output_tokens_per_s",
	"cost_per_hour", "cost_per_m_output_tokens", "kv_sequences", "predictions", "calibration", "binding_bound", "binding_value_ms", "replica_limit",
	"joules_per_output_token", "power_w", "max_model_len", "cost_per_m_prompt_tokens"}

// CSV writes one line per row.
func (p *Plan) CSV() ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(PlanCSVHeader); err != nil {
		return nil, err
	}
	f := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
			return ""
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	for _, r := range p.Rows {
		row := []string{r.Config, r.GPU, strconv.Itoa(r.TP), r.Model, strconv.Itoa(r.Replicas), strconv.Itoa(r.GPUs), r.Routing,
			strconv.FormatBool(r.Meets), r.Why, f(r.PerReplica), f(r.Headroom), f(r.Step)}
		if a := r.AtTarget; a != nil {
			row = append(row, f(a.TTFTP50), f(a.TTFTP95), f(a.TPOTP50), f(a.TPOTP95), f(a.E2EP95), f(a.OutputTokensPerS))
		} else {
			row = append(row, "", "", "", "", "", "")
		}
		row = append(row, f(r.CostPerHour), f(r.CostPerMOutputTokens), strconv.Itoa(r.KVSequences), strconv.Itoa(r.Predictions), r.Calibration)
		if a := r.AtTarget; a != nil && a.BindingBound != "" {
			row = append(row, a.BindingBound, f(a.BindingValue))
		} else {
			row = append(row, "", "")
		}
		row = append(row, r.Limit)
		if a := r.AtTarget; a != nil && a.JoulesPerOutputToken > 0 {
			row = append(row, f(a.JoulesPerOutputToken), f(a.PowerW))
		} else {
			row = append(row, "", "")
		}
		row = append(row, maxModelLen(r.MaxModelLen), f(r.CostPerMPromptTokens))
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// CostPerMTokens is the row's cost of a million tokens: output tokens,
// or a pooling endpoint's prompt tokens.
func (r PlanRow) CostPerMTokens() float64 {
	if r.CostPerMPromptTokens > 0 {
		return r.CostPerMPromptTokens
	}
	return r.CostPerMOutputTokens
}

// SLOText describes the plan's SLO in words.
func (p *Plan) SLOText() string { return p.SLO.String() }

// DecodePlan reads a plan file (knee plan), refusing any other.
func DecodePlan(path string, b []byte) (*Plan, error) {
	var p Plan
	if err := decodeVersioned(path, b, &p); err != nil {
		return nil, err
	}
	if p.Kind != PlanKind {
		return nil, fmt.Errorf("%s: not a plan (knee plan) file", path)
	}
	return &p, nil
}

// WhyStopped opens the why of a row whose search was stopped before it
// ended (interrupted, or out of memory).
const WhyStopped = "stopped"

// unfinished counts the configurations (of all) a search of which was
// stopped before it ended; a configuration's routings are one.
func (p *Plan) unfinished() (n, of int) {
	all, cut := map[string]bool{}, map[string]bool{}
	for _, r := range p.Rows {
		all[r.Config] = true
		if strings.HasPrefix(r.Why, WhyStopped) {
			cut[r.Config] = true
		}
	}
	return len(cut), len(all)
}

// Answer is the plan in one line: the cheapest configuration meeting the
// SLO, its cost, and the next cheapest ("" when none meets it). A search
// stopped before it ended gives none: a configuration it never reached
// may be cheaper than the cheapest it found.
func (p *Plan) Answer() string {
	var meets []PlanRow
	for _, r := range p.Rows {
		if r.Meets {
			meets = append(meets, r)
		}
	}
	if len(meets) == 0 {
		return ""
	}
	say := func(r PlanRow) string {
		s := fmt.Sprintf("%d × %s", max(r.Replicas, 1), r.Config)
		if r.PrefillReplicas > 0 {
			s = fmt.Sprintf("%s × %s", r.Split(), r.Config)
		}
		if r.Routing != "" && r.Replicas > 1 {
			s += " (" + r.Routing + ")"
		}
		if r.CostPerHour > 0 {
			s += fmt.Sprintf(", $%.2f/h", r.CostPerHour)
		}
		if r.Calibration == CalibrationApriori {
			s += ", on a priori figures"
		}
		if r.MaxModelLen > 0 {
			s += ", with vLLM's --max-model-len at most " + Thousands(r.MaxModelLen)
		}
		return s
	}
	out := say(meets[0])
	if a := meets[0].AtTarget; a != nil && a.BindingBound != "" {
		// The bound nearest its limit there: what more load would break
		// first, not what set the count (one replica's capacity may).
		out += fmt.Sprintf(", nearest its bound %s (%.1f ms)", BoundText(a.BindingBound), a.BindingValue)
	}
	if meets[0].Cliff != "" {
		out += " (fewer were on a cliff: they met the SLO on some arrival schedules only)"
	}
	if meets[0].ModeEdge != "" {
		out += " (on a mode boundary: see its cliff line)"
	}
	if a := meets[0].AtTarget; a != nil && a.JoulesPerOutputToken > 0 {
		out += fmt.Sprintf(", %.3g J per output token at %.0f W (predicted power model)", a.JoulesPerOutputToken, a.PowerW)
	}
	if n, of := p.unfinished(); p.Interrupted && n > 0 {
		return fmt.Sprintf("none: the search was stopped with %d of %s unfinished; the cheapest meeting the SLO so far is %s",
			n, Plural(of, "configuration"), out)
	}
	if p.Disaggregated {
		return out + "; " + disaggVerdict(meets)
	}
	if len(meets) > 1 {
		out += "; next: " + say(meets[1])
	}
	return out
}

// Split is a disaggregated row's pools, as xPyD, with its link.
func (r PlanRow) Split() string {
	return fmt.Sprintf("%dP%dD (KV link %g Gb/s)", r.PrefillReplicas, r.DecodeReplicas, r.KVLinkGbps)
}

// maxModelLen is a row's MaxModelLen for the CSV: empty when the model's
// whole context fits.
func maxModelLen(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// Thousands writes n with thousands separators.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
