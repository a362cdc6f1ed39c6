package summary

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/results"
)

// Goodput holds per-request bounds in vLLM's sense: a request is good when
// it succeeded and met every bound given. Zero bounds are not checked.
type Goodput struct {
	TTFT, TTFTSched, TPOT, E2E, E2ESched time.Duration
	// TTFAT bounds the first answer token (not reasoning).
	TTFAT time.Duration
}

// ParseGoodput reads "ttft:300,tpot:50,e2e:4000" (milliseconds). Keys are
// vLLM's ttft, tpot and e2el (or e2e), and knee's ttft_sched and
// e2e_sched, which count from the scheduled arrival, and ttfat, the
// first answer token of a model that reasons.
func ParseGoodput(s string) (Goodput, error) {
	var g Goodput
	if strings.TrimSpace(s) == "" {
		return g, nil
	}
	// Pairs are comma-separated, or space-separated as vLLM's
	// --goodput ttft:300 tpot:50 takes them.
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		k, v, ok := strings.Cut(strings.TrimSpace(part), ":")
		ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil || !(ms > 0 && ms <= 1e9) {
			return g, fmt.Errorf("%q must look like ttft:300 (a positive number of ms)", part)
		}
		d := time.Duration(ms * float64(time.Millisecond))
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "ttft":
			g.TTFT = d
		case "ttft_sched":
			g.TTFTSched = d
		case "tpot":
			g.TPOT = d
		case "e2e", "e2el":
			g.E2E = d
		case "e2e_sched":
			g.E2ESched = d
		case "ttfat":
			g.TTFAT = d
		default:
			return g, fmt.Errorf("unknown goodput metric %q: use ttft, ttft_sched, ttfat, tpot, e2e (e2el) or e2e_sched", k)
		}
	}
	return g, nil
}

// Set reports whether any bound is given.
func (g Goodput) Set() bool { return g != Goodput{} }

// bounds lists the given bounds in ms, for the result.
func (g Goodput) bounds() map[string]float64 {
	m := map[string]float64{}
	for k, d := range map[string]time.Duration{"ttft": g.TTFT, "ttft_sched": g.TTFTSched, "tpot": g.TPOT, "e2e": g.E2E, "e2e_sched": g.E2ESched, "ttfat": g.TTFAT} {
		if d > 0 {
			m[k] = float64(d) / 1e6
		}
	}
	return m
}

// good reports whether a finished record meets every bound. A request
// with one output token has no TPOT and meets that bound, as in vLLM.
func (g Goodput) good(r *record.Record) bool {
	if !r.OK() || r.Chunks == 0 {
		return false
	}
	check := func(bound, v time.Duration) bool { return bound == 0 || v <= bound }
	tpot := time.Duration(0)
	if out := r.OutputTokens(); out > 1 {
		tpot = (r.LastToken - r.FirstToken) / time.Duration(out-1)
	}
	if g.TTFAT > 0 && r.FirstAnswer == 0 {
		// No answer is never a good one.
		return false
	}
	return check(g.TTFT, r.FirstToken-r.Sent) && check(g.TTFTSched, r.FirstToken-r.Scheduled) &&
		check(g.TPOT, tpot) && check(g.E2E, r.LastToken-r.Sent) && check(g.E2ESched, r.LastToken-r.Scheduled) &&
		check(g.TTFAT, r.FirstAnswer-r.Sent)
}

// goodputResult summarises the good requests over the window.
func goodputResult(g Goodput, good, finished int64, window float64) *results.Goodput {
	if !g.Set() {
		return nil
	}
	out := &results.Goodput{Bounds: g.bounds(), Good: good, Finished: finished}
	if finished > 0 {
		out.Share = float64(good) / float64(finished)
	}
	if window > 0 {
		out.RequestsPerS = float64(good) / window
	}
	return out
}
