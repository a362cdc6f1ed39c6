package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// pageKind is one kind of report page, built from files knee wrote (in
// testdata/pages: a live sweep of knee sim, predicted sweeps on two GPUs,
// a voice sweep, a run with its records, a plan and a calibration) or from
// a hand-made result where a case needs one.
type pageKind struct {
	name  string
	input func(t *testing.T) HTMLInput
	// explore, when set, is an SLO explorer question ("metric,pct,bound")
	// and the load it must answer.
	explore string
	want    float64
	// interpolated says the answer lies between two levels.
	interpolated bool
	// charts is how many charts the page must draw at least.
	charts int
}

func readPage(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "pages", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pageSweep(t *testing.T, name string) *results.Sweep {
	t.Helper()
	s, err := results.DecodeSweep(name, readPage(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var pageKinds = []pageKind{
	{name: "sweep", charts: 8, input: func(t *testing.T) HTMLInput {
		return HTMLInput{Sweeps: []*results.Sweep{pageSweep(t, "live.json")}}
	}},
	{name: "predicted", charts: 8, input: func(t *testing.T) HTMLInput {
		return HTMLInput{Sweeps: []*results.Sweep{pageSweep(t, "pred.json")}}
	}},
	{name: "voice", charts: 9, input: func(t *testing.T) HTMLInput {
		return HTMLInput{Sweeps: []*results.Sweep{pageSweep(t, "voice.json")}}
	}},
	{name: "compare", charts: 21, input: func(t *testing.T) HTMLInput {
		return HTMLInput{Sweeps: []*results.Sweep{pageSweep(t, "pred.json"), pageSweep(t, "a100.json")}}
	}},
	// Two repeated sweeps overlaid: each level's interval across its
	// repeats drawn as a bar.
	{name: "compare-repeated", charts: 5, input: func(t *testing.T) HTMLInput {
		return HTMLInput{Sweeps: []*results.Sweep{withIntervals(sampleSweep("L40S", 1)), withIntervals(sampleSweep("H100", 0.4))}}
	}},
	// knee compare --gate -o: the comparison with the gate's verdicts.
	{name: "gate", charts: 5, input: func(t *testing.T) HTMLInput {
		base, cand := pageSweep(t, "pred.json"), pageSweep(t, "a100.json")
		rules, err := results.ParseGateRules("ttft_sched.p95:+10%,throughput:-5%")
		if err != nil {
			t.Fatal(err)
		}
		return HTMLInput{Sweeps: []*results.Sweep{base, cand},
			Gate: &GatePage{Baseline: "pred.json", Candidate: "a100.json", Result: results.Gate(base, cand, rules)}}
	}},
	// The hand-made sweep's ttft_sched p95 is 260 ms at 1.5/s and 900 ms
	// at 2/s: 300 ms lies 40/640 of the way, at 1.53125/s.
	{name: "handmade", charts: 8, input: func(t *testing.T) HTMLInput {
		return HTMLInput{Sweeps: []*results.Sweep{sampleSweep("L40S", 1)}}
	}, explore: "ttft_sched,p95,300", want: 1.53125, interpolated: true},
	// The same sweep, its level at 1.5/s erring past the SLO's error
	// rate: the knee stops at 1/s, and so does the explorer, which once
	// left errors out and answered 1.53125.
	{name: "erring", charts: 8, input: func(t *testing.T) HTMLInput {
		s := sampleSweep("L40S", 1)
		r := *s.Levels[3].Run
		r.Requests.Failed, r.Requests.Errors = 10, map[string]int64{"http_500:server_error": 10}
		r.Requests.Sent += 10
		s.Levels[3].Run = &r
		s.FindKnees()
		if s.Knees.SLO == nil || s.Knees.SLO.Load != 1 {
			t.Fatalf("SLO knee %+v, want 1/s", s.Knees.SLO)
		}
		return HTMLInput{Sweeps: []*results.Sweep{s}}
	}, explore: "ttft_sched,p95,300", want: 1},
	{name: "run", charts: 2, input: func(t *testing.T) HTMLInput {
		r, err := results.DecodeRun("run.json", readPage(t, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		lines, err := results.ReadRecords(bytes.NewReader(readPage(t, "run.jsonl")))
		if err != nil {
			t.Fatal(err)
		}
		return HTMLInput{Runs: []*results.Run{r}, Records: map[int][]results.RecordLine{0: lines}}
	}},
	{name: "run-repeated", charts: 4, input: func(t *testing.T) HTMLInput {
		return HTMLInput{Runs: []*results.Run{repeatedRun(t)}}
	}},
	{name: "run-server", charts: 1, input: func(t *testing.T) HTMLInput {
		return HTMLInput{Runs: []*results.Run{sampleServerRun()}}
	}},
	{name: "plan", charts: 2, input: func(t *testing.T) HTMLInput {
		p, err := results.DecodePlan("plan.json", readPage(t, "plan.json"))
		if err != nil {
			t.Fatal(err)
		}
		return HTMLInput{Plans: []*results.Plan{p}}
	}},
	{name: "plan-day", charts: 5, input: func(t *testing.T) HTMLInput {
		p, err := results.DecodePlan("day.json", readPage(t, "day.json"))
		if err != nil {
			t.Fatal(err)
		}
		return HTMLInput{Plans: []*results.Plan{p}}
	}},
	{name: "calibration", charts: 6, input: func(t *testing.T) HTMLInput {
		c, err := results.DecodeCalibration("cal.json", readPage(t, "cal.json"))
		if err != nil {
			t.Fatal(err)
		}
		return HTMLInput{Calibrations: []*results.Calibration{c}}
	}},
}

func renderPage(t *testing.T, k pageKind) []byte {
	t.Helper()
	in := k.input(t)
	in.Version = "test"
	var b bytes.Buffer
	if err := HTML(&b, in); err != nil {
		t.Fatalf("%s: %v", k.name, err)
	}
	return b.Bytes()
}

var (
	styleBody  = regexp.MustCompile(`(?s)<style>.*?</style>`)
	scriptBody = regexp.MustCompile(`(?s)<script>.*?</script>`)
	dataBody   = regexp.MustCompile(`(?s)(<script type="application/json" id="knee-data">)(.*?)(</script>)`)
)

// pageStructure is a page with its shared style and script left out and
// its data reduced to what it holds (the keys and how many of each), so a
// golden file shows the sections, tables and notes of one kind of page.
func pageStructure(t *testing.T, page []byte) []byte {
	t.Helper()
	page = styleBody.ReplaceAll(page, []byte("<style>/* page.css */</style>"))
	page = scriptBody.ReplaceAll(page, []byte("<script>/* page.js */</script>"))
	m := dataBody.FindSubmatch(page)
	if m == nil {
		t.Fatal("the page has no data")
	}
	var data map[string]any
	if err := json.Unmarshal(m[2], &data); err != nil {
		t.Fatalf("the page's data: %v", err)
	}
	var keys []string
	for k, v := range data {
		switch v := v.(type) {
		case []any:
			keys = append(keys, fmt.Sprintf("%s[%d]", k, len(v)))
		default:
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return dataBody.ReplaceAll(page, []byte("${1}/* "+strings.Join(keys, " ")+" */${3}"))
}

// TestPageStructureGolden: each kind of page, its sections and tables.
func TestPageStructureGolden(t *testing.T) {
	for _, k := range pageKinds {
		t.Run(k.name, func(t *testing.T) {
			golden(t, "page_"+k.name+".html", pageStructure(t, renderPage(t, k)))
		})
	}
}

// TestPagesAreSelfContained: no page names anything outside itself, and
// its content security policy forbids fetching anything when viewed.
func TestPagesAreSelfContained(t *testing.T) {
	outside := regexp.MustCompile(`(?i)(src|href|action)\s*=\s*["']?\s*(https?:|//|file:)`)
	for _, k := range pageKinds {
		page := string(renderPage(t, k))
		if m := outside.FindString(page); m != "" {
			t.Errorf("%s: the page loads something from outside: %q", k.name, m)
		}
		if regexp.MustCompile(`<script[^>]+src=`).MatchString(page) || strings.Contains(page, "<link") {
			t.Errorf("%s: the page loads a script or style of its own", k.name)
		}
		if !strings.Contains(page, `content="default-src 'none';`) || strings.Contains(page, "connect-src") {
			t.Errorf("%s: the page's content security policy allows fetching", k.name)
		}
	}
}

// TestPageDataOfASweep: what the charts draw is what the sweep holds.
func TestPageDataOfASweep(t *testing.T) {
	s := pageSweep(t, "live.json")
	d := sweepData(s)
	if len(d.Levels) != len(s.Levels) {
		t.Fatalf("%d levels drawn of %d", len(d.Levels), len(s.Levels))
	}
	for i, l := range d.Levels {
		run := s.Levels[i].Run
		if l.Stats["ttft_sched"]["p95"] != run.Stats.TTFTSched.P95 {
			t.Errorf("level %g: ttft_sched p95 %g, the file says %g", l.Load, l.Stats["ttft_sched"]["p95"], run.Stats.TTFTSched.P95)
		}
		// A distribution read from the histogram rises with the
		// percentile and agrees with the summary's p50 to the histogram's
		// precision.
		dist := l.Dist["ttft"]
		if len(dist) == 0 {
			t.Fatalf("level %g: no TTFT distribution", l.Load)
		}
		for j := 1; j < len(dist); j++ {
			if dist[j][1] < dist[j-1][1] {
				t.Errorf("level %g: the distribution falls at p%g", l.Load, dist[j][0])
			}
		}
		for _, p := range dist {
			if p[0] == 50 && (p[1] < run.Stats.TTFT.P50*0.99 || p[1] > run.Stats.TTFT.P50*1.01) {
				t.Errorf("level %g: TTFT p50 %g from the histogram, %g in the summary", l.Load, p[1], run.Stats.TTFT.P50)
			}
		}
	}
	// The SLO knee was not reached: no line is drawn for it, and the
	// explorer's note says so.
	if !s.Knees.SLONotReached || slices.ContainsFunc(d.Knees, func(k kneeJS) bool { return k.Kind == "slo" }) {
		t.Errorf("an SLO knee is drawn although the sweep never reached it: %+v", d.Knees)
	}
	if !strings.HasPrefix(d.SLOKnee, "not reached") {
		t.Errorf("the SLO knee reads %q", d.SLOKnee)
	}
}

// FuzzReportPage: whatever a result file holds, once it decodes, the page
// is written without a panic (a knee naming a level the file lacks, a
// plan without rows, histograms that are not histograms).
func FuzzReportPage(f *testing.F) {
	for _, name := range []string{"live.json", "run.json", "plan.json", "cal.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "pages", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"schema_version":1,"axis":"rate","levels":[{"load":1}],"knees":{"saturation":{"load":9,"index":4}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var in HTMLInput
		if p, err := results.DecodePlan("f", b); err == nil {
			in.Plans = []*results.Plan{p}
		} else if c, err := results.DecodeCalibration("f", b); err == nil {
			in.Calibrations = []*results.Calibration{c}
		} else if s, err := results.DecodeSweep("f", b); err == nil {
			in.Sweeps = []*results.Sweep{s}
		} else if r, err := results.DecodeRun("f", b); err == nil {
			in.Runs = []*results.Run{r}
		} else {
			return
		}
		_ = HTML(io.Discard, in)
	})
}

// repeatedRun is the sample run measured twice (two seeds) and pooled,
// each repeat with slices whose TTFT and server queue drift apart.
func repeatedRun(t *testing.T) *results.Run {
	t.Helper()
	var runs []*results.Run
	for i := range 2 {
		r, err := results.DecodeRun("run.json", readPage(t, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		r.Config.Seed = uint64(i + 1)
		r.Stats.TTFTSched.P95 *= 1 + 0.1*float64(i)
		r.SliceS = 5
		for k := range 4 {
			waiting := float64(k * (i + 1))
			r.Slices = append(r.Slices, results.Slice{StartS: float64(5 * k), EndS: float64(5 * (k + 1)), Sent: 50,
				TTFTSched: results.SliceDist{Count: 50, P50: 20, P95: 30 + float64(5*k*i), P99: 40}, Server: &results.SliceGauges{AtS: float64(5*k) + 4.9, Waiting: &waiting}})
		}
		runs = append(runs, r)
	}
	m, err := results.PoolRepeats(runs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// withIntervals gives every level of s a 95% interval across three
// repeats of ±15% on its TTFT p95 from the schedule and ±5% on its
// throughput.
func withIntervals(s *results.Sweep) *results.Sweep {
	for i := range s.Levels {
		r := *s.Levels[i].Run
		p95, tput := r.Stats.TTFTSched.P95, r.Throughput.RequestsPerS
		r.Repeats = &results.Repeats{Count: 3, Method: results.RepeatMethod, Intervals: map[string]results.Interval{
			"ttft_sched.p95": {Mean: p95, Low: p95 * 0.85, High: p95 * 1.15, HalfWidth: p95 * 0.15},
			"throughput":     {Mean: tput, Low: tput * 0.95, High: tput * 1.05, HalfWidth: tput * 0.05},
		}}
		s.Levels[i].Run = &r
	}
	return s
}
