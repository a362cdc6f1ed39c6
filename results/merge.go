package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// mergedHistograms are the histograms a merge joins, with the summary each
// one fills (nil: only the histogram is kept). The latency ones must be in
// every shard's file; the others came later, and a merge of older files
// goes without them.
var mergedHistograms = []struct {
	name     string
	scale    float64
	into     func(r *Run) *Summary
	required bool
}{
	{"ttft_us", 1000, func(r *Run) *Summary { return &r.Stats.TTFT }, true},
	{"ttft_sched_us", 1000, func(r *Run) *Summary { return &r.Stats.TTFTSched }, true},
	{"itl_us", 1000, func(r *Run) *Summary { return &r.Stats.ITL }, true},
	{"tpot_us", 1000, func(r *Run) *Summary { return &r.Stats.TPOT }, true},
	{"e2e_us", 1000, func(r *Run) *Summary { return &r.Stats.E2E }, true},
	{"e2e_sched_us", 1000, func(r *Run) *Summary { return &r.Stats.E2ESched }, true},
	{"queue_wait_us", 1000, func(r *Run) *Summary { return &r.Stats.QueueWait }, true},
	{"input_tokens", 1, func(r *Run) *Summary { return &r.Tokens.Input }, false},
	{"output_tokens", 1, func(r *Run) *Summary { return &r.Tokens.Output }, false},
	{"send_lateness_us", 1000, nil, false},
	{"ttfat_us", 1000, func(r *Run) *Summary { return &r.Stats.TTFAT }, false},
	{"ttfat_sched_us", 1000, func(r *Run) *Summary { return &r.Stats.TTFATSched }, false},
}

// MergeRuns joins the result files of the shards of one load (see
// results.Shard) into the run a single infinitely fast client sending all
// of it would have measured: histograms merged losslessly, so percentiles
// are those of the union of requests; counts, errors and tokens summed;
// the window the union of the shards' windows, and throughput over it.
// Client health is the worst shard's, named; the server's view is shard
// 0's, the one that reads it, set against the merged client figures; the
// per-turn table and per-response server timings are rebuilt from their
// histograms. Shards that disagree on what they ran, or started apart, are warned
// about.
func MergeRuns(runs []*Run) (*Run, error) {
	if len(runs) == 0 {
		return nil, errors.New("nothing to merge")
	}
	shards, err := orderShards(runs)
	if err != nil {
		return nil, err
	}
	first := shards[0]
	m := &Run{SchemaVersion: SchemaVersion, Config: first.Config, Environment: first.Environment, StartedAt: first.StartedAt,
		WindowStartedAt: first.WindowStartedAt, MergedShards: len(shards), Histograms: Histograms{}}
	m.Warnings = append(m.Warnings, agreement(shards)...)
	mergeWindow(m, shards)
	if err := mergeFigures(m, shards); err != nil {
		return nil, err
	}
	mergeGPU(m, shards)
	if m.Server != nil {
		m.Notes = append(m.Notes, "the server's side of its view is shard 0's reading over its window (only shard 0 reads it); the client's side is every shard's, merged")
	} else {
		m.Notes = append(m.Notes, "no server view: only shard 0 reads the server's metrics, and it read none (--no-server-metrics, or the server exports none knee reads)")
	}
	mergeSmallPrint(m, shards)
	return m, nil
}

// mergeWindow is the union of the shards' windows: from the earliest start
// to the latest end.
func mergeWindow(m *Run, shards []*Run) {
	var windowEnd time.Time
	for _, r := range shards {
		if r.StartedAt.Before(m.StartedAt) {
			m.StartedAt = r.StartedAt
		}
		if r.WindowStartedAt.Before(m.WindowStartedAt) {
			m.WindowStartedAt = r.WindowStartedAt
		}
		if end := r.WindowStartedAt.Add(seconds(r.WindowSeconds)); end.After(windowEnd) {
			windowEnd = end
		}
		m.Interrupted = m.Interrupted || r.Interrupted
	}
	m.WindowSeconds = windowEnd.Sub(m.WindowStartedAt).Seconds()
}

// mergeFigures merges the shards' histograms, counts, rates, health,
// calls, classes, turns, server view and slices, each exactly.
func mergeFigures(m *Run, shards []*Run) error {
	if err := mergeHistograms(m, shards); err != nil {
		return err
	}
	mergeCounts(m, shards)
	mergeTools(m, shards)
	mergeImages(m, shards)
	if err := mergeReasoning(m, shards); err != nil {
		return err
	}
	mergeRates(m, shards)
	mergeHealth(m, shards, "shard", 0)
	mergeCalls(m, shards)
	if err := mergeClasses(m, shards); err != nil {
		return err
	}
	m.Notes = append(m.Notes, fmt.Sprintf("merged from %d shards: percentiles are of the union of their requests (HDR histograms merged), counts summed, throughput over the union of their windows (%.1f s)", len(shards), m.WindowSeconds))
	// Before the server view: llama.cpp's rows come from the merged
	// per-response timings.
	if err := mergeTurns(m, shards); err != nil {
		return err
	}
	if oneTarget(shards) {
		m.Server = mergeServer(m, shards)
	}
	return mergeSlices(m, shards)
}

// mergeGPU is shard 0's GPU figures, divided by every shard's work.
func mergeGPU(m *Run, shards []*Run) {
	if g := shards[0].GPU; g != nil {
		// Only shard 0 scrapes the GPUs: their energy is the whole load's,
		// over shard 0's window, and the work it is divided by is every
		// shard's.
		c := *g
		c.GPUs = append([]GPUFigure(nil), g.GPUs...)
		c.PerWork(m)
		m.GPU = &c
		m.Notes = append(m.Notes, "the GPUs' figures are shard 0's scrape over its window (only shard 0 scrapes them), divided by every shard's work")
	}
}

// mergeSmallPrint writes the merge's small print afresh and keeps each
// shard's warnings that are not about its own sample.
func mergeSmallPrint(m *Run, shards []*Run) {
	// A shard's small print is about its own sample; the merge's is
	// written afresh.
	m.Warnings = append(m.Warnings, SmallPrint(m)...)
	for i, r := range shards {
		own := SmallPrint(r)
		for _, w := range r.Warnings {
			if !slices.Contains(own, w) {
				m.Warnings = appendOnce(m.Warnings, fmt.Sprintf("shard %d: %s", i, w))
			}
		}
	}
}

// orderShards checks that runs are the shards 0..N−1 of one split, each
// once, and returns them in order.
func orderShards(runs []*Run) ([]*Run, error) {
	n := 0
	for i, r := range runs {
		if r == nil || r.Shard == nil || r.Shard.Count < 1 {
			return nil, fmt.Errorf("file %d is not a shard's result (no shard identity): run it with --shard I/N", i+1)
		}
		if n == 0 {
			n = r.Shard.Count
		}
		if r.Shard.Count != n {
			return nil, fmt.Errorf("the files are shards of splits into %d and %d parts", n, r.Shard.Count)
		}
		if r.Shard.Index < 0 || r.Shard.Index >= n {
			return nil, fmt.Errorf("file %d says it is shard %d of %d: not a shard of that split", i+1, r.Shard.Index, n)
		}
		if err := plausible(r); err != nil {
			return nil, fmt.Errorf("file %d (shard %d/%d): %v", i+1, r.Shard.Index, n, err)
		}
	}
	if n > len(runs) {
		return nil, fmt.Errorf("the files are shards of a split into %d parts, and only %d are given: a merge without the others would undercount the load", n, len(runs))
	}
	if key := configKey(runs[0].Config); true {
		for i, r := range runs[1:] {
			if k := configKey(r.Config); k != key {
				return nil, fmt.Errorf("file %d ran another configuration than file 1 (%s differ): shards of one load run one configuration", i+2, configDiff(runs[0].Config, r.Config))
			}
		}
	}
	out := make([]*Run, n)
	for _, r := range runs {
		if out[r.Shard.Index] != nil {
			return nil, fmt.Errorf("shard %d/%d is given twice", r.Shard.Index, n)
		}
		out[r.Shard.Index] = r
	}
	var missing []string
	for i, r := range out {
		if r == nil {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shards %v of %d are missing: a merge without them would undercount the load", missing, n)
	}
	return out, nil
}

// agreement warns when the shards did not start one load together.
func agreement(shards []*Run) []string {
	var w []string
	if !oneTarget(shards) {
		w = append(w, "the shards sent to different base URLs (each to a replica of its own, as a fleet routed by arrival): the merged figures are the fleet's, "+
			"and no server view is kept, as each shard's server saw only its own share")
	}
	var starts []time.Time
	ref := shards[0].Shard.StartAt
	for i, r := range shards {
		s := r.Shard
		if i > 0 && ((s.StartAt == nil) != (ref == nil) || s.StartAt != nil && !s.StartAt.Equal(*ref)) {
			w = append(w, fmt.Sprintf("shard %d was told to start at another instant than shard 0 (--start-at)", i))
		}
		if s.StartAt != nil && s.StartLatenessMs > math.Max(50, 10*r.WindowSeconds) {
			w = append(w, lateShard(i, r))
		}
		starts = append(starts, r.WindowStartedAt)
	}
	if ref == nil {
		sort.Slice(starts, func(a, b int) bool { return starts[a].Before(starts[b]) })
		if spread := starts[len(starts)-1].Sub(starts[0]); spread > time.Second {
			w = append(w, fmt.Sprintf("the shards' windows started %.1f s apart (no --start-at): the merged load was never offered at once", spread.Seconds()))
		}
	}
	return w
}

// lateShard says how late shard i came to the schedule and what that did:
// arrivals already due went out at once, each measured from when it was
// due, so its latencies carry the delay rather than hiding it.
func lateShard(i int, r *Run) string {
	msg := fmt.Sprintf("shard %d started %.0f ms after --start-at", i, r.Shard.StartLatenessMs)
	if n := r.Arrivals.WindowArrivals; n > 0 && r.Calls == nil {
		msg += fmt.Sprintf(": %d of its %d arrivals (%.1f%%) went out late, at once, and are measured from when they were due (their latency includes the delay)",
			r.Arrivals.LateSends, n, 100*float64(r.Arrivals.LateSends)/float64(n))
	} else {
		msg += ": its arrivals already due went out at once and are measured from when they were due"
	}
	return msg
}

// configKey is the configuration as JSON, for comparing shards. The base
// URL is left out: shards of one load may each send to a replica of its
// own (a fleet routed round-robin by arrival), which agreement notes.
func configKey(c Config) string {
	c.BaseURL = ""
	b, _ := json.Marshal(c)
	return string(b)
}

// oneTarget reports whether every shard sent to the same base URL.
func oneTarget(shards []*Run) bool {
	for _, r := range shards[1:] {
		if r.Config.BaseURL != shards[0].Config.BaseURL {
			return false
		}
	}
	return true
}

// configDiff names the configuration fields that differ.
func configDiff(a, b Config) string {
	var ma, mb map[string]json.RawMessage
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	json.Unmarshal(ja, &ma)
	json.Unmarshal(jb, &mb)
	var diff []string
	for k := range ma {
		if string(ma[k]) != string(mb[k]) {
			diff = append(diff, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			diff = append(diff, k)
		}
	}
	sort.Strings(diff)
	return strings.Join(diff, ", ")
}

// maxCount bounds any count in a result file: more than a billion
// requests, tokens by the quadrillion, is a forged or damaged file, and
// summing such counts over shards could overflow.
const maxCount = 1 << 50

// plausible says what in a shard's result cannot be a measurement:
// negative or absurd counts, times outside 2000–2200, a window that is not
// a finite span.
func plausible(r *Run) error {
	if err := plausibleCounts(r); err != nil {
		return err
	}
	for name, t := range map[string]time.Time{"started_at": r.StartedAt, "window_started_at": r.WindowStartedAt} {
		if t.Year() < 2000 || t.Year() > 2200 {
			return fmt.Errorf("%s is %s: not when a run ran", name, t.Format(time.RFC3339))
		}
	}
	return nil
}

// plausibleCounts says what in a result's counts and window cannot be a
// measurement; every command reading a result file refuses it, as merge
// does (a report once drew a run of -5 requests).
func plausibleCounts(r *Run) error {
	counts := map[string]int64{"requests.sent": r.Requests.Sent, "requests.ok": r.Requests.OK, "requests.failed": r.Requests.Failed,
		"requests.interrupted": r.Requests.Interrupted, "requests.warmup": r.Requests.Warmup,
		"requests.ramp": r.Requests.Ramp, "requests.ramp_running": r.Requests.RampRunning,
		"tokens.input_total": r.Tokens.InputTotal, "tokens.output_total": r.Tokens.OutputTotal, "tokens.cached_total": r.Tokens.CachedTotal}
	for k, v := range r.Requests.Errors {
		counts["requests.errors."+k] = v
	}
	for i, sl := range r.Slices {
		// Checked in place: a long run at a fine --slice has many.
		if v := min(sl.Sent, sl.Failed, sl.Completed); v < 0 {
			return fmt.Errorf("slices[%d] counts %d: not a count a run measures", i, v)
		}
		if v := max(sl.Sent, sl.Failed, sl.Completed); v > maxCount {
			return fmt.Errorf("slices[%d] counts %d: not a count a run measures", i, v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if v := counts[k]; v < 0 || v > maxCount {
			return fmt.Errorf("%s is %d: not a count a run measures", k, v)
		}
	}
	if w := r.WindowSeconds; !(w >= 0 && w < 1e9) {
		return fmt.Errorf("window_s is %v: not a span a run measures", w)
	}
	return nil
}

// mergeHistograms merges every histogram all shards have and summarises it.
// mergeNamed merges the shards' histograms called name; complete says
// every shard had one (a shard without one either had no value of that
// kind or was written by an older knee: the caller knows which).
func mergeNamed(shards []*Run, name string) (sum *hdrhistogram.Histogram, complete bool, err error) {
	complete = true
	for i, r := range shards {
		enc := r.Histograms[name]
		if enc == "" {
			complete = false
			continue
		}
		d, err := DecodeHistogram(enc)
		if err != nil {
			return nil, false, fmt.Errorf("shard %d: %s: %v", i, name, err)
		}
		if sum == nil {
			sum = d
		} else if dropped := sum.Merge(d); dropped > 0 {
			return nil, false, fmt.Errorf("shard %d: %d values of %s fall outside the merged histogram's range", i, dropped, name)
		}
	}
	return sum, complete, nil
}

func mergeHistograms(m *Run, shards []*Run) error {
	for _, h := range mergedHistograms {
		sum, complete, err := mergeNamed(shards, h.name)
		if err != nil {
			return err
		}
		if !complete || sum == nil {
			if h.required {
				return fmt.Errorf("a shard's file has no %s histogram: written by an older knee, it cannot be merged exactly", h.name)
			}
			if h.into != nil {
				m.Notes = append(m.Notes, fmt.Sprintf("a shard's file has no %s histogram (an older knee): its summary is left out of the merge", h.name))
			}
			continue
		}
		m.Histograms[h.name] = EncodeHistogram(sum)
		if h.into != nil {
			s := SummarizeHistogram(sum, h.scale)
			if h.scale == 1 {
				// Tokens per request: whole counts.
				s = SummarizeCounts(sum)
			}
			*h.into(m) = s
		}
		if h.name == "send_lateness_us" {
			m.Arrivals.SendLatenessP50Ms = float64(sum.ValueAtPercentile(50)) / 1000
			m.Arrivals.SendLatenessP99Ms = float64(sum.ValueAtPercentile(99)) / 1000
		}
	}
	return nil
}

// MergeSweeps merges the shards' sweep files level by level (each level
// with MergeRuns) and finds the knees of the merged levels.
func MergeSweeps(sweeps []*Sweep) (*Sweep, error) {
	if len(sweeps) == 0 {
		return nil, errors.New("nothing to merge")
	}
	first := sweeps[0]
	// The sweeps must be the shards of one split, each once, as for runs:
	// checked on the first level all of them measured.
	for li := range first.Levels {
		var runs []*Run
		for _, sw := range sweeps {
			if li < len(sw.Levels) && sw.Levels[li].Run != nil {
				runs = append(runs, sw.Levels[li].Run)
			}
		}
		if len(runs) == len(sweeps) {
			if _, err := orderShards(runs); err != nil {
				return nil, err
			}
			break
		}
	}
	m := *first
	m.Levels, m.Interrupted = nil, false
	for i, s := range sweeps {
		if s.Axis != first.Axis || len(s.Levels) != len(first.Levels) {
			return nil, fmt.Errorf("sweep %d has %d levels of %s, sweep 1 %d of %s: not shards of one sweep", i+1, len(s.Levels), s.Axis, len(first.Levels), first.Axis)
		}
		m.Interrupted = m.Interrupted || s.Interrupted
	}
	for li, l := range first.Levels {
		var runs []*Run
		var failed []string
		for i, s := range sweeps {
			sl := s.Levels[li]
			if sl.Load != l.Load {
				return nil, fmt.Errorf("level %d is %g in sweep 1 and %g in sweep %d", li+1, l.Load, sl.Load, i+1)
			}
			if sl.Run == nil {
				failed = append(failed, fmt.Sprintf("sweep %d: %s", i+1, sl.Error))
				continue
			}
			runs = append(runs, sl.Run)
		}
		level := Level{Load: l.Load}
		if len(failed) > 0 {
			level.Error = fmt.Sprintf("a shard's level failed (%v): not merged", failed)
		} else if r, err := MergeRuns(runs); err != nil {
			level.Error = err.Error()
		} else {
			level.Run = r
		}
		m.Levels = append(m.Levels, level)
	}
	m.FindKnees()
	return &m, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
