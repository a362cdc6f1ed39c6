package results

import (
	"slices"
	"time"
)

// maxServerSpread is how far apart the shards' windows may start for
// shard 0's reading of the server to stand for every shard's requests.
const maxServerSpread = time.Second

// mergeServer is the server view of a merged run: the server's side as
// shard 0 read it, which saw every shard's requests, set against the
// merged client figures rather than shard 0's share of them, with the
// traffic check made again against the merged totals. When the shards'
// windows did not coincide, shard 0's reading covers only part of the
// merged requests, and the view says so and gives no delivery. Nil when
// shard 0 read no server view.
func mergeServer(m *Run, shards []*Run) *Server {
	src := shards[0].Server
	if src == nil {
		return nil
	}
	s := *src
	s.Figures = slices.Clone(src.Figures)
	s.Warnings = slices.Clone(src.Warnings)
	s.Traffic = nil
	for i := range s.Figures {
		f := &s.Figures[i]
		if v, ok := clientFigure(m, f.Name); ok {
			f.Client = v
		} else {
			f.Client = nil
		}
		if v, ok := timingFigure(m.ServerTimings, s.Source, f.Name); ok {
			// Read from every shard's answers, not shard 0's alone.
			f.Server = v
		}
		f.SetDelivery()
	}
	if s.RequestsFrom == "timings" {
		// llama.cpp counts no requests; every shard's answers carried
		// their timings.
		s.Requests = 0
		if m.ServerTimings != nil {
			s.Requests = m.ServerTimings.Requests
		}
	}
	starts := make([]time.Time, len(shards))
	for i, r := range shards {
		starts[i] = r.WindowStartedAt
	}
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	mixed := false
	if spread := starts[len(starts)-1].Sub(starts[0]); spread > maxServerSpread {
		s.Traffic = append(s.Traffic, "the shards' windows started "+spread.Round(100*time.Millisecond).String()+" apart: shard 0's reading of the server covers only part of the merged requests")
		mixed = true
	} else {
		counted := s.RequestsFrom == ""
		mixed = s.CheckTraffic(m, s.Requests, counted)
		if !counted {
			mixed = s.CheckTokenTraffic(m) || mixed
		}
	}
	if mixed {
		s.DropDelivery()
	} else {
		s.CheckTTFTGap()
	}
	return &s
}

// timingFigure is the server's value of a llama.cpp row that comes from
// its per-response timings (prefill and TPOT percentiles), which every
// shard read from its own answers; ok is false for every other row.
func timingFigure(st *ServerTimings, source, name string) (*float64, bool) {
	if st == nil || source != "llamacpp" {
		return nil, false
	}
	var v float64
	switch name {
	case "prefill p50":
		v = st.PromptMs.P50
	case "prefill p99":
		v = st.PromptMs.P99
	case "TPOT p50":
		v = st.TPOT.P50
	case "TPOT p99":
		v = st.TPOT.P99
	default:
		return nil, false
	}
	return &v, true
}
