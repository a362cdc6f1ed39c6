package results

import (
	"maps"
	"slices"
	"strconv"
)

// Histograms a call workload and a llama.cpp target add to a run, so that
// a merge of shards rebuilds its per-turn table and the server's
// per-response timings exactly, as it does the main percentiles.
const (
	ServerPromptHistogram = "server_prompt_us"
	ServerTPOTHistogram   = "server_tpot_us"
)

// TurnHistogram names turn k's histogram of metric (ttft or itl).
func TurnHistogram(k int, metric string) string {
	return "turn_" + strconv.Itoa(k) + "_" + metric + "_us"
}

// mergeTurns rebuilds the merged run's per-turn table and server timings
// from the shards' histograms. What a shard's file lacks (an older knee)
// is left out and said so.
func mergeTurns(m *Run, shards []*Run) error {
	var turns []int
	lacking := false
	for _, r := range shards {
		for _, t := range r.ByTurn {
			if _, ok := r.Histograms[TurnHistogram(t.Turn, "ttft")]; !ok {
				lacking = true
			}
			if !slices.Contains(turns, t.Turn) {
				turns = append(turns, t.Turn)
			}
		}
	}
	slices.Sort(turns)
	if lacking {
		m.Notes = append(m.Notes, "a shard's file has no per-turn histograms (an older knee): the per-turn table is left out of the merge")
	} else {
		for _, k := range turns {
			ts := TurnStats{Turn: k}
			err := mergeInto(m, shards, map[string]*Summary{TurnHistogram(k, "ttft"): &ts.TTFT, TurnHistogram(k, "itl"): &ts.ITL})
			if err != nil {
				return err
			}
			m.ByTurn = append(m.ByTurn, ts)
		}
	}
	return mergeServerTimings(m, shards)
}

// mergeServerTimings merges the per-response timings (llama.cpp's) of the
// shards that have them.
func mergeServerTimings(m *Run, shards []*Run) error {
	timed := slices.ContainsFunc(shards, func(r *Run) bool { return r.ServerTimings != nil })
	if !timed {
		return nil
	}
	st := &ServerTimings{}
	for _, r := range shards {
		if r.ServerTimings == nil {
			continue
		}
		if _, ok := r.Histograms[ServerPromptHistogram]; !ok {
			m.Notes = append(m.Notes, "a shard's file has no server-timing histograms (an older knee): the per-response server timings are left out of the merge")
			return nil
		}
		st.Requests += r.ServerTimings.Requests
	}
	if err := mergeInto(m, shards, map[string]*Summary{ServerPromptHistogram: &st.PromptMs, ServerTPOTHistogram: &st.TPOT}); err != nil {
		return err
	}
	m.ServerTimings = st
	return nil
}

// mergeInto merges each named histogram over the shards into m and its
// summary (in ms) into its place; a shard without one had no such request.
func mergeInto(m *Run, shards []*Run, into map[string]*Summary) error {
	for _, name := range slices.Sorted(maps.Keys(into)) {
		h, _, err := mergeNamed(shards, name)
		if err != nil {
			return err
		}
		if h != nil {
			m.Histograms[name] = EncodeHistogram(h)
			*into[name] = SummarizeHistogram(h, 1000)
		}
	}
	return nil
}
