package results

import (
	"bytes"
	"encoding/csv"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// CSVHeader lists the columns of a sweep's CSV file.
var CSVHeader = []string{
	"load", "axis", "achieved_rate", "ttft_p50_ms", "ttft_p95_ms", "ttft_p99_ms", "ttft_sched_p50_ms", "ttft_sched_p95_ms", "ttft_sched_p99_ms",
	"itl_p50_ms", "itl_p95_ms", "itl_p99_ms", "tpot_p50_ms", "e2e_p50_ms", "e2e_p99_ms",
	"throughput_per_s", "output_tokens_per_s", "cache_hit_rate", "achieved_concurrency", "error_rate", "client_health",
	"requests", "goodput_share", "goodput_per_s", "target_rate", "offered_rate",
	"server_ttft_p50_ms", "server_ttft_p99_ms", "server_itl_p50_ms", "server_itl_p99_ms", "server_tpot_p50_ms",
	"server_e2e_p50_ms", "server_e2e_p99_ms", "server_output_tokens_per_s", "server_lag_p99_ms",
	"server_ttft_mean_ms", "server_itl_mean_ms", "server_e2e_mean_ms", "error",
	"completion_rate_per_s", "sent", "ok", "failed", "cut", "unsent", "missing_share", "warnings",
	"ttfat_p50_ms", "ttfat_p95_ms", "ttfat_p99_ms", "reasoning_tokens_mean", "answer_tokens_mean", "no_answer_share",
	"class", "gpu_energy_j", "gpu_power_mean_w", "joules_per_output_token", "output_tokens_per_joule",
	"repeats", "ttft_sched_p50_ci_ms", "ttft_sched_p95_ci_ms", "ttft_sched_p99_ci_ms", "itl_p50_ci_ms", "e2e_sched_p95_ci_ms", "throughput_ci_per_s",
	"prefill_queue_mean_ms", "prefill_mean_ms", "kv_transfer_mean_ms", "decode_queue_mean_ms", "first_decode_step_mean_ms",
}

// csvIntervals are the columns holding a repeated level's 95% interval
// half-widths (Repeats), by figure.
var csvIntervals = map[string]string{
	"ttft_sched_p50_ci_ms": "ttft_sched.p50", "ttft_sched_p95_ci_ms": "ttft_sched.p95", "ttft_sched_p99_ci_ms": "ttft_sched.p99",
	"itl_p50_ci_ms": "itl.p50", "e2e_sched_p95_ci_ms": "e2e_sched.p95", "throughput_ci_per_s": "throughput",
}

// CSV renders one row per level, in CSVHeader's columns. Values a level
// does not have are empty, never NaN.
func (s *Sweep) CSV() ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(CSVHeader); err != nil {
		return nil, err
	}
	f := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	for _, l := range s.Levels {
		col := map[string]string{"load": f(l.Load), "axis": s.Axis}
		if l.Run == nil {
			col["error"] = l.Error
		} else {
			s.csvColumns(l, col, f)
		}
		rows := []map[string]string{col}
		if l.Run != nil {
			// A mix's classes follow their level, one row each, named in
			// the class column (empty on the whole level's row).
			for _, name := range slices.Sorted(maps.Keys(l.Run.Classes)) {
				cc := map[string]string{"load": f(l.Load), "axis": s.Axis, "class": name}
				s.csvColumns(Level{Load: l.Load, Run: l.Run.Classes[name]}, cc, f)
				rows = append(rows, cc)
			}
		}
		for _, col := range rows {
			row := make([]string, len(CSVHeader))
			for i, name := range CSVHeader {
				row[i] = col[name]
			}
			if err := w.Write(row); err != nil {
				return nil, err
			}
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// csvColumns fills a measured level's columns.
func (s *Sweep) csvColumns(l Level, col map[string]string, f func(float64) string) {
	r := l.Run
	csvEnergyAndRepeats(r, col, f)
	csvFigures(r, col, f)
	csvServer(r.Server, col, f)
	if ph := r.Phases; ph != nil {
		// A disaggregated model's TTFT by phase: the means, which every
		// source gives exactly.
		for i, sm := range ph.All() {
			if sm.Count > 0 || !ph.Estimate { // an engine's phase untimed: no figure
				col[PhaseNames[i]+"_mean_ms"] = f(sm.Mean)
			}
		}
	}
}

// csvEnergyAndRepeats fills a repeated level's intervals and the GPUs'
// energy.
func csvEnergyAndRepeats(r *Run, col map[string]string, f func(float64) string) {
	if rp := r.Repeats; rp != nil {
		col["repeats"] = strconv.Itoa(rp.Count)
		for column, figure := range csvIntervals {
			if iv, ok := rp.Intervals[figure]; ok {
				col[column] = f(iv.HalfWidth)
			}
		}
	}
	if g := r.GPU; g != nil && len(g.GPUs) > 0 {
		col["gpu_energy_j"], col["gpu_power_mean_w"] = f(g.EnergyJ), f(g.PowerMeanW)
		col["joules_per_output_token"], col["output_tokens_per_joule"] = f(g.JoulesPerOutputToken), f(g.OutputTokensPerJoule)
	}
}

// csvFigures fills the client's figures: rates, latencies, counts, the
// cache, reasoning, concurrency and goodput.
func csvFigures(r *Run, col map[string]string, f func(float64) string) {
	st := r.Stats
	// Throughput is completions per second in the window, as the terminal
	// and the plots say; the shifted-window estimate that saturation is
	// judged by has its own column.
	tput := r.Throughput.RequestsPerS
	if r.Calls != nil {
		tput = r.Calls.TurnsPerS
	}
	q := func(sum Summary, v float64) string {
		if sum.Count == 0 {
			return ""
		}
		return f(v)
	}
	for k, v := range map[string]string{
		"achieved_rate": f(r.Arrivals.AchievedRate), "target_rate": f(r.Arrivals.TargetRate), "offered_rate": f(r.Arrivals.OfferedRate),
		"ttft_p50_ms": q(st.TTFT, st.TTFT.P50), "ttft_p95_ms": q(st.TTFT, st.TTFT.P95), "ttft_p99_ms": q(st.TTFT, st.TTFT.P99),
		"ttft_sched_p50_ms": q(st.TTFTSched, st.TTFTSched.P50), "ttft_sched_p95_ms": q(st.TTFTSched, st.TTFTSched.P95), "ttft_sched_p99_ms": q(st.TTFTSched, st.TTFTSched.P99),
		"itl_p50_ms": q(st.ITL, st.ITL.P50), "itl_p95_ms": q(st.ITL, st.ITL.P95), "itl_p99_ms": q(st.ITL, st.ITL.P99),
		"tpot_p50_ms": q(st.TPOT, st.TPOT.P50), "e2e_p50_ms": q(st.E2E, st.E2E.P50), "e2e_p99_ms": q(st.E2E, st.E2E.P99),
		"throughput_per_s": f(tput), "output_tokens_per_s": f(r.Throughput.OutputTokensPerS),
		"error_rate": f(r.Requests.ErrorRate()), "client_health": r.Health.Verdict,
		"requests": strconv.FormatInt(r.Requests.OK+r.Requests.Failed, 10),
		"sent":     strconv.FormatInt(r.Requests.Sent, 10), "ok": strconv.FormatInt(r.Requests.OK, 10),
		"failed": strconv.FormatInt(r.Requests.Failed, 10), "cut": strconv.FormatInt(r.Requests.Interrupted, 10),
		"unsent": strconv.FormatInt(r.Arrivals.Unsent, 10), "missing_share": f(r.MissingShare()),
		"warnings": strings.Join(r.Warnings, " | "),
	} {
		col[k] = v
	}
	if r.Cache != nil && r.Cache.Reported {
		col["cache_hit_rate"] = f(r.Cache.HitRate)
	}
	col["ttfat_p50_ms"], col["ttfat_p95_ms"], col["ttfat_p99_ms"] = q(st.TTFAT, st.TTFAT.P50), q(st.TTFAT, st.TTFAT.P95), q(st.TTFAT, st.TTFAT.P99)
	if rs := r.Reasoning; rs != nil {
		col["reasoning_tokens_mean"], col["answer_tokens_mean"] = f(rs.ReasoningPerRequest.Mean), f(rs.AnswerPerRequest.Mean)
		col["no_answer_share"] = f(rs.NoAnswerShare())
	}
	conc := r.Arrivals.AchievedConcurrency
	if r.Calls != nil {
		conc = r.Calls.AchievedConcurrency
	}
	col["achieved_concurrency"] = f(conc)
	if cr := r.Arrivals.CompletionRate; cr > 0 {
		col["completion_rate_per_s"] = f(cr)
	}
	if g := r.Goodput; g != nil {
		col["goodput_share"], col["goodput_per_s"] = f(g.Share), f(g.RequestsPerS)
	}
}

// csvServer fills the server view's measured figures and its lag.
func csvServer(sv *Server, col map[string]string, f func(float64) string) {
	if sv == nil {
		return
	}
	// A percentile the server only has as a histogram bucket is left
	// empty: its interpolated point is no measurement.
	for _, fig := range sv.Figures {
		if fig.Server == nil || fig.Estimate {
			continue
		}
		if name, ok := serverColumns[fig.Name]; ok {
			col[name] = f(*fig.Server)
		}
	}
	if sv.Lag != nil {
		col["server_lag_p99_ms"] = f(sv.Lag.P99)
	}
}

// serverColumns maps comparison rows to CSV columns.
var serverColumns = map[string]string{
	"TTFT p50": "server_ttft_p50_ms", "TTFT p99": "server_ttft_p99_ms", "ITL p50": "server_itl_p50_ms", "ITL p99": "server_itl_p99_ms",
	"TPOT p50": "server_tpot_p50_ms", "E2E p50": "server_e2e_p50_ms", "E2E p99": "server_e2e_p99_ms",
	"output tok/s": "server_output_tokens_per_s", "TTFT mean": "server_ttft_mean_ms", "ITL mean": "server_itl_mean_ms", "E2E mean": "server_e2e_mean_ms",
}
