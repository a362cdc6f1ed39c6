package results

import (
	"slices"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
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
	// A shard without a turn's or timing's histogram had no such request.
	merged := func(name string) (*hdrhistogram.Histogram, bool, error) {
		sum, _, err := mergeNamed(shards, name)
		return sum, sum != nil, err
	}
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
			for _, part := range []struct {
				metric string
				into   *Summary
			}{{"ttft", &ts.TTFT}, {"itl", &ts.ITL}} {
				h, ok, err := merged(TurnHistogram(k, part.metric))
				if err != nil {
					return err
				}
				if ok {
					m.Histograms[TurnHistogram(k, part.metric)] = EncodeHistogram(h)
					*part.into = SummarizeHistogram(h, 1000)
				}
			}
			m.ByTurn = append(m.ByTurn, ts)
		}
	}
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
	for _, part := range []struct {
		name string
		into *Summary
	}{{ServerPromptHistogram, &st.PromptMs}, {ServerTPOTHistogram, &st.TPOT}} {
		h, ok, err := merged(part.name)
		if err != nil {
			return err
		}
		if ok {
			m.Histograms[part.name] = EncodeHistogram(h)
			*part.into = SummarizeHistogram(h, 1000)
		}
	}
	m.ServerTimings = st
	return nil
}
