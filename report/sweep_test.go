package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kneebench/knee/results"
)

// sampleSweep is a synthetic sweep with a clear knee.
func sampleSweep(label string, scale float64) *results.Sweep {
	s := &results.Sweep{SchemaVersion: results.SchemaVersion, Label: label, Axis: "rate", Workload: "voice",
		Config: results.Config{Voice: &results.VoiceConfig{Turns: 4}},
		SLO:    results.SLO{Bounds: []results.Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02}}
	loads := []float64{0.25, 0.5, 1, 1.5, 2, 3}
	p95 := []float64{80, 95, 140, 260, 900, 4000}
	hit := []float64{0.99, 0.98, 0.95, 0.7, 0.3, 0.1}
	for i, l := range loads {
		r := sampleRun()
		r.Stats.TTFTSched = results.Summary{Count: 100, P50: p95[i] * scale * 0.6, P95: p95[i] * scale, P99: p95[i] * scale * 1.3}
		r.Cache = &results.Cache{Reported: true, HitRate: hit[i]}
		r.Calls = &results.Calls{TurnsPerS: l * 3 * min(1, 2.2/l), Started: 100, Completed: int64(100 * min(1, 2.2/l))}
		r.Arrivals.OfferedRate = l
		r.Requests.Failed, r.Requests.Errors = 0, map[string]int64{}
		r.Config.Voice = s.Config.Voice
		s.Levels = append(s.Levels, results.Level{Load: l, Run: r})
	}
	s.FindKnees()
	return s
}

func TestSweepTextGolden(t *testing.T) {
	s := sampleSweep("L40S", 1)
	var b bytes.Buffer
	LevelHeader(&b, s, WideColumns)
	for _, l := range s.Levels {
		LevelRow(&b, s, l, WideColumns)
	}
	LevelRow(&b, s, results.Level{Load: 4, Error: "connection refused"}, WideColumns)
	Knees(&b, s)
	if err := Compare(&b, []*results.Sweep{s, sampleSweep("H100", 0.4)}); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep.golden", b.Bytes())
}

func TestSweepPlotGolden(t *testing.T) {
	var b bytes.Buffer
	if err := SweepPlot(&b, sampleSweep("L40S", 1)); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep.png", b.Bytes())
	b.Reset()
	if err := ComparePlot(&b, []*results.Sweep{sampleSweep("L40S", 1), sampleSweep("H100", 0.4)}); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.png", b.Bytes())
}

// TestSweepNarrowTable: the layout for outputs under WideColumns fits in
// 100 columns.
func TestSweepNarrowTable(t *testing.T) {
	s := sampleSweep("L40S", 1)
	var b bytes.Buffer
	LevelHeader(&b, s, 100)
	for _, l := range s.Levels {
		l.Run.Interrupted = true
		LevelRow(&b, s, l, 100)
	}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("a %d-column line: %q", n, line)
		}
	}
	golden(t, "sweep_narrow.golden", b.Bytes())
}

// TestProgressFitsTheTerminal: the live line at 80 and 200 columns, never
// longer than the terminal, never cutting a part in the middle.
func TestProgressFitsTheTerminal(t *testing.T) {
	running, waiting := 3.0, 12.0
	st := Status{Level: "level 3/8 (4)", Elapsed: 7*time.Second + 300*time.Millisecond, Total: 15 * time.Second,
		Sent: 28, OK: 24, Failed: 1, InFlight: 3, TTFTP50ms: 41.2, TTFTP95ms: 78.9, ServerRunning: &running, ServerWaiting: &waiting}
	var b bytes.Buffer
	for _, width := range []int{80, 200} {
		var out bytes.Buffer
		p := NewProgress(&out, true, width)
		p.Update(st)
		line := strings.TrimPrefix(out.String(), "\r\033[K")
		if n := utf8.RuneCountInString(line); n >= width {
			t.Errorf("%d columns: a %d-column line", width, n)
		}
		for _, seg := range strings.Split(line, " · ") {
			if !slices.Contains(st.Segments(), seg) {
				t.Errorf("%d columns: %q is not a whole part", width, seg)
			}
		}
		fmt.Fprintf(&b, "%d: %s\n", width, line)
	}
	st.Level, st.Elapsed = "", 16*time.Second
	var out bytes.Buffer
	NewProgress(&out, false, 0).Update(st)
	fmt.Fprintf(&b, "plain: %s", out.String())
	golden(t, "progress.golden", b.Bytes())
}

// TestExcludedLevelsInPlotAndCompare: a client-limited level is drawn
// hollow with its reason, and no peak is read from it; sweeps that
// measured different things get a warning.
func TestExcludedLevelsInPlotAndCompare(t *testing.T) {
	s := sampleSweep("L40S", 1)
	last := s.Levels[len(s.Levels)-1].Run
	last.Health = results.Health{Verdict: results.VerdictClientLimited, Reasons: []string{"timer lateness p99 31 ms"}}
	last.Calls.TurnsPerS = 99 // a limited client's figure, never a peak
	s.FindKnees()
	var png bytes.Buffer
	if err := SweepPlot(&png, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep_excluded.png", png.Bytes())
	other := sampleSweep("H100", 0.4)
	other.Config.Model, other.Config.DurationS = "llama-70b", 60
	var b bytes.Buffer
	if err := Compare(&b, []*results.Sweep{s, other}); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if strings.Contains(text, "99.00") {
		t.Errorf("a peak was read from the excluded level:\n%s", text)
	}
	for _, want := range []string{"differ in model", "differ in window"} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
			t.Errorf("no warning %q:\n%s", want, text)
		}
	}
}

// TestWrapKeepsUnitsWithTheirNumbers: a report line wraps at a word, and
// never between a number and its unit.
func TestWrapKeepsUnitsWithTheirNumbers(t *testing.T) {
	line := "SLO knee        3/s — the largest load meeting ttft_sched p95 ≤ 300 ms with errors under 2% (260.4 ms there). Provision against this."
	got := wrapLine(line, 100, strings.Repeat(" ", 16))
	for _, l := range strings.Split(got, "\n") {
		if utf8.RuneCountInString(l) > 100 {
			t.Errorf("a %d-column line: %q", utf8.RuneCountInString(l), l)
		}
		if strings.HasPrefix(strings.TrimSpace(l), "ms") {
			t.Errorf("a unit left alone at the start of a line:\n%s", got)
		}
	}
	if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(line), " ") {
		t.Errorf("wrapping changed the words:\n%s", got)
	}
}

// TestVerdictTextGolden: a sweep whose top levels were cut by the drain
// timeout shows the cut share in its rows, lists every level's warning
// under the table, leaves the cut levels out of the SLO knee with their
// reason, and a sweep that never crossed its SLO says so instead of
// offering a provisioning limit.
func TestVerdictTextGolden(t *testing.T) {
	s := sampleSweep("cut", 1)
	s.Workload, s.Config.Voice = "requests", nil
	for i := range s.Levels {
		r := s.Levels[i].Run
		r.Calls, r.Config.Voice = nil, nil
		r.Throughput.RequestsPerS = s.Levels[i].Load
		r.Requests.OK = 100
		if i >= 4 {
			r.Throughput.RequestsPerS *= 0.6
			r.Requests.Interrupted = int64(40 * (i - 3))
			r.Warnings = append(r.Warnings, fmt.Sprintf("the drain timeout (1m0s) cut %d requests still running after the window", r.Requests.Interrupted))
		}
	}
	s.Levels[1].Run.Warnings = append(s.Levels[1].Run.Warnings, "the server's counters went back between scrapes")
	s.FindKnees()
	var b bytes.Buffer
	SweepTable(&b, s, WideColumns)
	// The flat sweep's server keeps up to 2/s and falls behind at 3/s
	// (73 of 100 calls completed), which misses the SLO however low its
	// latency: without that level, every level judged meets it.
	flat := sampleSweep("flat", 0.05)
	flat.FindKnees()
	if k := flat.Knees.SLO; k == nil || k.Load != 2 || flat.Knees.SLONotReached {
		t.Errorf("the flat sweep's SLO knee %+v (not reached %v), want 2/s, crossed where it fell behind", k, flat.Knees.SLONotReached)
	}
	flat.Levels = flat.Levels[:5]
	flat.FindKnees()
	Knees(&b, flat)
	if err := Compare(&b, []*results.Sweep{s, flat}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"warning 0.5/s", "warning 2/s", "28.6%", "not reached", "not reached (≥ 2)", "missing from its percentiles", "saturation      2/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("the verdict text lacks %q", want)
		}
	}
	golden(t, "verdicts.golden", b.Bytes())
	var page bytes.Buffer
	if err := HTML(&page, HTMLInput{Sweeps: []*results.Sweep{s}, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"28.6% (40 cut, 0 unsent)", "missing from its percentiles", "the drain timeout (1m0s) cut 40 requests"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
}

// TestSLOKneeSaysWhyTheNextMissed: the knee line names why the first
// level past it missed, and the heavier levels that met the SLO again.
func TestSLOKneeSaysWhyTheNextMissed(t *testing.T) {
	s := sampleSweep("L40S", 1)
	s.Levels[3].Run.Stats.TTFTSched.P95 = 420
	s.Levels[4].Run.Stats.TTFTSched.P95 = 250
	s.FindKnees()
	var b bytes.Buffer
	Knees(&b, s)
	out := strings.Join(strings.Fields(b.String()), " ")
	for _, want := range []string{"SLO knee 1 calls/s", "The next level judged, 1.5 calls/s, missed: ttft_sched p95 420 ms > 300",
		"yet 2 calls/s met the SLO again: measure the level that missed again (--repeat)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

// TestOverruledShortfallSaid: a shortfall a heavier level disproved is
// named, and the saturation line does not claim every level kept up.
func TestOverruledShortfallSaid(t *testing.T) {
	s := sampleSweep("L40S", 1)
	s.Knees.Saturation = nil
	s.Knees.Overruled = []results.ExcludedLevel{{Load: 2, Reason: "fell 8% short of its offer, but 3 kept pace delivering 1.4× its throughput"}}
	var b bytes.Buffer
	Knees(&b, s)
	out := strings.Join(strings.Fields(b.String()), " ")
	for _, want := range []string{"saturation none — every level that fell behind its offer was outpaced", "not saturation 2 calls/s — fell 8% short"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

// TestOneStreamIsSingular: a closed loop of one stream reads "1 stream"
// wherever a load is said (terminal, page, live ticker), others keep
// their unit; a closed loop's level offers no rate ("-", not 0.00).
func TestOneStreamIsSingular(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{{1, " streams", "1 stream"}, {2, " streams", "2 streams"}, {1, "/s", "1/s"}, {1, " calls/s", "1 calls/s"}, {0.5, " streams", "0.5 streams"}} {
		if got := loadOf(tc.v, tc.unit); got != tc.want {
			t.Errorf("loadOf(%v, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
	one := 1.0
	s := &results.Sweep{Axis: "concurrency", SLO: results.SLO{Bounds: []results.Bound{{Metric: "ttft_sched", Percentile: 95, Ms: 300}}, MaxErrorRate: 0.02},
		Levels: []results.Level{{Load: 1, Run: &results.Run{}}},
		Knees:  results.Knees{SLO: &results.Knee{Load: 1, LatencyMs: &one}, SLONotReached: true}}
	var b strings.Builder
	Knees(&b, s)
	if !strings.Contains(b.String(), "up to 1 stream,") || strings.Contains(b.String(), "1 streams") {
		t.Errorf("knees of one stream:\n%s", b.String())
	}
	if got := offeredText(&results.Run{}); got != "-" {
		t.Errorf("a closed loop's offered rate reads %q", got)
	}
}

// TestWrapKeepsTheDot: a line wrapped at " · " keeps the dot at the start
// of its continuation, so a qualifier ("· gemm_tiles" after a plan's
// configuration) stays marked as one, and wrapping drops no word.
func TestWrapKeepsTheDot(t *testing.T) {
	line := "answer: 1 × h100-80gbx4/llama-3.1-70b@bf16 · gemm_tiles, $12.00/h, nearest its bound ttft.p95:2000 (247.0 ms) · 3.34 J per output token"
	got := wrapLine(line, 60, "  ")
	if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(line), " ") {
		t.Errorf("wrapping changed the words:\n%s", got)
	}
	if !strings.Contains(got, "\n  · gemm_tiles") {
		t.Errorf("the qualifier lost its dot or was not wrapped there:\n%s", got)
	}
}
