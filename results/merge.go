package results

import (
	"errors"
	"fmt"
	"slices"
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

// maxCount bounds any count in a result file: more than a billion
// requests, tokens by the quadrillion, is a forged or damaged file, and
// summing such counts over shards could overflow.
const maxCount = 1 << 50

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
