package battery

import (
	"bytes"
	"encoding/csv"
	"flag"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/bounds.csv from the shipped tuning's errors")

func readCells(t testing.TB) []*Cell {
	t.Helper()
	cells, err := ReadFile("testdata/cells.csv")
	if err != nil {
		t.Fatal(err)
	}
	return cells
}

// bound is a cell's stated bound on a metric's |error|: its error under
// the tuning that set it, 3 points more, rounded up to 5%.
func bound(e float64) float64 { return 5 * math.Ceil((100*math.Abs(e)+3)/5) }

// TestBatteryHoldsItsBounds holds every cell of the public battery to its
// stated bound (testdata/bounds.csv, written by -update), so a change to
// the cost model or a scheduler that helps one cell and breaks another
// shows here. The bounds are the shipped tuning's errors, not goals:
// docs/fidelity.md gives them and the cross-validated figures.
func TestBatteryHoldsItsBounds(t *testing.T) {
	results := Evaluate(readCells(t), nil, runtime.GOMAXPROCS(0))
	if *update {
		writeBounds(t, results)
		return
	}
	bounds := readBounds(t)
	for _, r := range results {
		if r.Err != nil {
			t.Errorf("%s: not predicted: %v", r.Cell.Name, r.Err)
			continue
		}
		for m := range r.Cell.Measured {
			b, ok := bounds[r.Cell.Name+" "+m]
			switch e := 100 * math.Abs(r.Error(m)); {
			case !ok:
				t.Errorf("%s %s: no bound (go test ./predict/battery -update)", r.Cell.Name, m)
			case e > b:
				t.Errorf("%s %s: |error| %.1f%%, over its bound of %.0f%%", r.Cell.Name, m, e, b)
			}
		}
	}
	for m, s := range Medians(results) {
		t.Logf("median |error| %-10s %5.1f%% over %d", m, 100*s.Median, s.N)
	}
}

func writeBounds(t *testing.T, results []Result) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"cell", "metric", "bound_pct"})
	for _, r := range results {
		for _, m := range Metrics {
			if _, ok := r.Cell.Measured[m]; ok && r.Err == nil {
				_ = w.Write([]string{r.Cell.Name, m, strconv.FormatFloat(bound(r.Error(m)), 'f', 0, 64)})
			}
		}
	}
	w.Flush()
	if err := os.WriteFile("testdata/bounds.csv", b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readBounds(t *testing.T) map[string]float64 {
	t.Helper()
	f, err := os.Open("testdata/bounds.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, row := range rows[1:] {
		v, err := strconv.ParseFloat(row[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		out[row[0]+" "+row[1]] = v
	}
	return out
}

// TestReadRefuses: a cells file with a bad header, a metric knee does not
// know, or a figure that is not a positive number is refused with the row.
func TestReadRefuses(t *testing.T) {
	head := strings.Join(header, ",") + "\n"
	row := func(metric, v string) string {
		return "s,c,h100-80gbx1,qwen3-8b,vllm,1,128,128,c1,10," + metric + "," + v + "\n"
	}
	for _, tc := range []struct{ name, text, want string }{
		{"header", "a,b\n", "want the header"},
		{"metric", head + row("ttft_p42", "1"), "metric \"ttft_p42\""},
		{"NaN", head + row("ttft_p95", "NaN"), "positive number"},
		{"negative", head + row("ttft_p95", "-3"), "positive number"},
		{"load", head + strings.Replace(row("ttft_p95", "1"), ",c1,", ",cx,", 1), "row 2"},
	} {
		_, err := Read(strings.NewReader(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestEveryMetricHasAFigure: the names a cells file may use and the
// figures a run computes are one list.
func TestEveryMetricHasAFigure(t *testing.T) {
	for _, m := range Metrics {
		if figures[m] == nil {
			t.Errorf("metric %s has no figure", m)
		}
	}
	if len(figures) != len(Metrics) {
		t.Errorf("%d figures for %d metrics", len(figures), len(Metrics))
	}
}

// TestAnchorsAsShipped: the battery's harness predicts the anchors (vLLM's
// CI latency runs, which cross-validation fits in every fold) as
// predict's TestShippedTuning does: each within 10% under the tuning
// fitted to them.
func TestAnchorsAsShipped(t *testing.T) {
	anchors, err := ReadFile("testdata/anchors.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Evaluate(anchors, nil, runtime.GOMAXPROCS(0)) {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Cell.Name, r.Err)
		}
		if e := r.Error("e2e_mean"); math.Abs(e) > 0.10 {
			t.Errorf("%s: %.0f ms against %.0f measured (%+.1f%%)", r.Cell.Name, r.Predicted["e2e_mean"], r.Cell.Measured["e2e_mean"], 100*e)
		}
		t.Logf("%-36s %+.1f%%", r.Cell.Name, 100*r.Error("e2e_mean"))
	}
}

// TestLossWeighsSources: a source's figures weigh as one, however many
// it has, so a six-cell source pulls as hard as a sweep of two hundred.
func TestLossWeighsSources(t *testing.T) {
	res := func(src string, n int, ratio float64) []Result {
		var out []Result
		for range n {
			c := &Cell{Source: src, Measured: map[string]float64{"e2e_mean": 100}}
			out = append(out, Result{Cell: c, Predicted: map[string]float64{"e2e_mean": 100 * ratio}})
		}
		return out
	}
	big, small := res("big", 200, math.E), res("small", 6, 1)
	if got := Loss(append(big, small...)); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("loss %v, want 0.5: the big source's 1 and the small one's 0, averaged", got)
	}
	unfit := []Result{{Cell: &Cell{Source: "s", Measured: map[string]float64{"out_tps": 5}}, Err: ErrUnfit}}
	if got := Loss(unfit); got != 1 {
		t.Errorf("an unfit cell's loss %v, want 1", got)
	}
}

// TestFitAllKeepsAnchorsOnlyFamilies: a family only the anchors measure
// keeps the shipped tuning (their own fit, on the parameters three points
// can tell apart); one the train cells measure is fitted, anchors and all.
func TestFitAllKeepsAnchorsOnlyFamilies(t *testing.T) {
	anchors, err := ReadFile("testdata/anchors.csv")
	if err != nil {
		t.Fatal(err)
	}
	var train []*Cell
	for _, c := range readCells(t) {
		if c.Name == "silybench/bf16/chat/c1" {
			train = append(train, c)
		}
	}
	if len(train) != 1 {
		t.Fatalf("want one training cell, got %d", len(train))
	}
	tuning, err := FitAll(train, anchors, nil, 2, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tuning["hopper"]; !ok || len(tuning) != 1 {
		t.Errorf("fitted %v, want hopper alone (ampere: anchors only)", tuning)
	}
}

// TestLossIsOneSum: the loss adds the same terms in the same order every
// time, whatever order maps give, so a fit compares the same numbers on
// every run (Nelder–Mead's path turns on the last bit).
func TestLossIsOneSum(t *testing.T) {
	var res []Result
	for i, src := range []string{"a", "b", "c", "d", "e", "f"} {
		c := &Cell{Source: src, Measured: map[string]float64{}}
		p := map[string]float64{}
		for j, m := range Metrics {
			c.Measured[m] = 1 + 0.1*float64(j)
			p[m] = c.Measured[m] * (1 + 0.013*float64(i+1)*float64(j+1))
		}
		res = append(res, Result{Cell: c, Predicted: p})
	}
	first := Loss(res)
	for range 200 {
		if got := Loss(res); math.Float64bits(got) != math.Float64bits(first) {
			t.Fatalf("loss %v, then %v", first, got)
		}
	}
}

// TestReadFileIsBounded: a device named as a cells file (/dev/zero, which
// never ends a line) is refused after a bounded read, not read on.
func TestReadFileIsBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}
	if _, err := ReadFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a cells file") {
		t.Errorf("got %v, want a refusal", err)
	}
}
