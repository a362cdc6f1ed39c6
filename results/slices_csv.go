package results

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
)

// SlicesCSVHeader are the columns of a slices CSV: the level's load (empty
// for a run's own), the slice's bounds and counts, each latency's
// p50/p95/p99 in ms over the requests due in it, and the server's gauges
// about its end (empty where not read), and the client's verdict on
// itself over it with its CPU and latest timer wake-up (empty where not
// judged: a prediction).
var SlicesCSVHeader = []string{
	"load", "start_s", "end_s", "sent", "failed", "completed", "output_tokens_per_s",
	"ttft_sched_count", "ttft_sched_p50_ms", "ttft_sched_p95_ms", "ttft_sched_p99_ms",
	"tpot_p50_ms", "tpot_p95_ms", "tpot_p99_ms",
	"e2e_sched_p50_ms", "e2e_sched_p95_ms", "e2e_sched_p99_ms",
	"server_at_s", "server_running", "server_waiting", "server_kv_cache_usage",
	"client_verdict", "client_cpu_percent", "client_timer_lag_max_ms",
}

// SlicesCSV renders a run's slices, one row each; load is written in the
// load column unless it is NaN (a run of no named load).
func (r *Run) SlicesCSV(load float64) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(SlicesCSVHeader); err != nil {
		return nil, err
	}
	if err := writeSliceRows(w, r, load); err != nil {
		return nil, err
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// SlicesCSV renders every measured level's slices, level by level.
func (s *Sweep) SlicesCSV() ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(SlicesCSVHeader); err != nil {
		return nil, err
	}
	for _, l := range s.Levels {
		if l.Run != nil {
			if err := writeSliceRows(w, l.Run, l.Load); err != nil {
				return nil, err
			}
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// HasSlices says whether any measured level kept time slices.
func (s *Sweep) HasSlices() bool {
	for _, l := range s.Levels {
		if l.Run != nil && len(l.Run.Slices) > 0 {
			return true
		}
	}
	return false
}

func writeSliceRows(w *csv.Writer, r *Run, load float64) error {
	for _, sl := range r.Slices {
		row := []string{csvNumber(load), csvNumber(sl.StartS), csvNumber(sl.EndS),
			strconv.FormatInt(sl.Sent, 10), strconv.FormatInt(sl.Failed, 10), strconv.FormatInt(sl.Completed, 10),
			csvNumber(sl.OutputTokensPerS), strconv.FormatInt(sl.TTFTSched.Count, 10)}
		for _, d := range []SliceDist{sl.TTFTSched, sl.TPOT, sl.E2ESched} {
			if d.Count == 0 {
				row = append(row, "", "", "")
				continue
			}
			row = append(row, csvNumber(d.P50), csvNumber(d.P95), csvNumber(d.P99))
		}
		g := sl.Server
		if g == nil {
			row = append(row, "", "", "", "")
		} else {
			row = append(row, csvNumber(g.AtS), csvPointer(g.Running), csvPointer(g.Waiting), csvPointer(g.KVCacheUsage))
		}
		if c := sl.Client; c == nil {
			row = append(row, "", "", "")
		} else {
			row = append(row, c.Verdict, csvNumber(c.CPUPercent), csvNumber(c.TimerLagMaxMs))
		}
		if err := w.Write(row); err != nil {
			return err
		}
	}
	return nil
}

// csvNumber writes v in the fewest digits that read back exactly; NaN
// and infinities are empty, never written.
func csvNumber(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func csvPointer(v *float64) string {
	if v == nil {
		return ""
	}
	return csvNumber(*v)
}
