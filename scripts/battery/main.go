// Command battery predicts knee's public training battery
// (predict/battery/testdata/cells.csv) and prints each cell's error, the
// median error of each metric, and with -cv the leave-one-source-out
// cross-validation: each source's cells predicted by a tuning fitted,
// family by family, to the other sources and the anchors (vLLM's CI
// latency runs, testdata/anchors.csv, the shipped tuning's own data)
// only. docs/fidelity.md quotes its output.
//
// Usage (from the repository root):
//
//	go run ./scripts/battery            # shipped tuning
//	go run ./scripts/battery -cv        # and cross-validation (minutes)
//	go run ./scripts/battery -fit       # and a fit to all of it (in sample)
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/kneebench/knee/predict/battery"
)

func main() {
	cv := flag.Bool("cv", false, "also cross-validate, leaving one source out at a time")
	fitAll := flag.Bool("fit", false, "also fit every family to the whole battery and the anchors, and predict the battery under that fit (in sample)")
	evals := flag.Int("evals", 60, "with -cv: the most evaluations of a family's fit")
	free := flag.Int("free", 4, "with -cv: the parameters fitted, in order compute and memory efficiency, step and per-sequence overhead (2: the efficiencies alone)")
	path := flag.String("cells", "predict/battery/testdata/cells.csv", "the battery's cells")
	anchorsPath := flag.String("anchors", "predict/battery/testdata/anchors.csv", "with -cv or -fit: cells every fit takes and none leaves out (the shipped tuning's own; \"\" for none)")
	md := flag.Bool("md", false, "print the shipped tuning's cells as a markdown table")
	shapes := flag.Bool("gemm", false, "give every GPU its family's matrix products by shape (presets.GEMMFitFor), which the presets leave out")
	noVocab := flag.Bool("no-vocab", false, "charge every model's embedding and LM head as products of every token, as the cost model did before it knew vocabularies (with the tuning shipped now)")
	flag.Parse()
	cells, err := battery.ReadFile(*path)
	if err != nil {
		fail(err)
	}
	for i := range cells {
		cells[i].KernelShapes = *shapes
		cells[i].NoVocabulary = *noVocab
	}
	workers := runtime.GOMAXPROCS(0)
	shipped := battery.Evaluate(cells, nil, workers)
	if *md {
		markdown(shipped)
		return
	}
	fmt.Println("## shipped tuning")
	table(shipped)
	bySource(shipped)
	medians("shipped", shipped)
	if !*cv && !*fitAll {
		return
	}
	var anchors []*battery.Cell
	if *anchorsPath != "" {
		if anchors, err = battery.ReadFile(*anchorsPath); err != nil {
			fail(err)
		}
	}
	fit := fitting{cells: cells, anchors: anchors, free: *free, evals: *evals, workers: workers}
	if *fitAll {
		fit.inSample()
	}
	if *cv {
		fit.crossValidate()
	}
}

// fitting is what -fit and -cv fit: the battery's cells, the anchors
// every fit takes, the parameters free and the evaluations a fit may make.
type fitting struct {
	cells, anchors       []*battery.Cell
	free, evals, workers int
}

// inSample fits every family to all the cells and the anchors, and
// prints the battery and the anchors under that fit.
func (f fitting) inSample() {
	tuning, err := battery.FitAll(f.cells, f.anchors, nil, f.free, f.evals, f.workers)
	if err != nil {
		fail(err)
	}
	fmt.Println("\n## fitted to every source and the anchors (in sample)")
	printTuning(tuning)
	in := battery.Evaluate(append(f.cells[:len(f.cells):len(f.cells)], f.anchors...), tuning, f.workers)
	table(in)
	bySource(in)
}

// crossValidate prints each fold's fit and predictions, and the medians
// of every cell predicted by the fold that left its source out.
func (f fitting) crossValidate() {
	folds, err := battery.CrossValidate(f.cells, f.anchors, f.free, f.evals, f.workers)
	if err != nil {
		fail(err)
	}
	var all []battery.Result
	for _, fold := range folds {
		fmt.Printf("\n## left out: %s\n", fold.Source)
		printTuning(fold.Tuning)
		table(fold.Results)
		all = append(all, fold.Results...)
	}
	fmt.Println()
	bySource(all)
	medians("cross-validated", all)
}

// printTuning prints each family's fitted parameters, in name order.
func printTuning(tuning battery.Tuning) {
	var fams []string
	for fam := range tuning {
		fams = append(fams, fam)
	}
	sort.Strings(fams)
	for _, fam := range fams {
		t := tuning[fam]
		fmt.Printf("fitted %s: compute %.3f, memory %.3f, step %.2f ms, per sequence %.3f ms\n",
			fam, t.ComputeEff, t.MemoryEff, t.StepOverhead*1000, t.SeqOverhead*1000)
	}
}

func table(results []battery.Result) {
	for _, r := range results {
		if r.Err != nil {
			fmt.Printf("%-52s not predicted: %v\n", r.Cell.Name, r.Err)
			continue
		}
		var parts []string
		for _, m := range battery.Metrics {
			if v, ok := r.Cell.Measured[m]; ok {
				parts = append(parts, fmt.Sprintf("%s %.4g→%.4g (%+.0f%%)", m, v, r.Predicted[m], 100*r.Error(m)))
			}
		}
		fmt.Printf("%-52s %s\n", r.Cell.Name, strings.Join(parts, " · "))
	}
}

// short names the metrics in the markdown table.
var short = map[string]string{"ttft_mean": "TTFT mean", "ttft_p50": "TTFT p50", "ttft_p95": "TTFT p95",
	"tpot_mean": "TPOT mean", "tpot_p95": "TPOT p95", "itl_p50": "ITL p50", "e2e_p95": "E2E p95",
	"e2e_mean": "E2E mean", "e2e_max": "batch latency", "out_tps": "tok/s"}

func markdown(results []battery.Result) {
	fmt.Println("| cell | GPUs · model · engine · in/out · load | measured → predicted (error) |")
	fmt.Println("|---|---|---|")
	for _, r := range results {
		c := r.Cell
		load := fmt.Sprintf("%d at once", c.Requests)
		if c.Concurrency > 0 {
			load = fmt.Sprintf("%d users, %d req", c.Concurrency, c.Requests)
		}
		var parts []string
		for _, m := range battery.Metrics {
			if v, ok := c.Measured[m]; ok && r.Err == nil {
				parts = append(parts, fmt.Sprintf("%s %s → %s (%+.0f%%)", short[m], num(v), num(r.Predicted[m]), 100*r.Error(m)))
			}
		}
		fmt.Printf("| %s | %s · %s · %s %s · %d/%d · %s | %s |\n", c.Name, c.GPU, c.Model, c.Engine, c.Version,
			c.Input, c.Output, load, strings.Join(parts, " · "))
	}
}

// num writes a figure with three significant digits, thousands grouped.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'g', 3, 64)
	if v >= 1000 {
		s = strconv.FormatFloat(math.Round(v), 'f', 0, 64)
		for i := len(s) - 3; i > 0; i -= 3 {
			s = s[:i] + "," + s[i:]
		}
	}
	return s
}

// bySource prints each source's medians.
func bySource(results []battery.Result) {
	var order []string
	groups := map[string][]battery.Result{}
	for _, r := range results {
		if groups[r.Cell.Source] == nil {
			order = append(order, r.Cell.Source)
		}
		groups[r.Cell.Source] = append(groups[r.Cell.Source], r)
	}
	for _, src := range order {
		medians(src, groups[src])
	}
}

func medians(label string, results []battery.Result) {
	med := battery.Medians(results)
	var names []string
	for m := range med {
		names = append(names, m)
	}
	sort.Strings(names)
	var parts []string
	for _, m := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f%% (%d)", m, 100*med[m].Median, med[m].N))
	}
	fmt.Printf("median |error|, %s: %s\n", label, strings.Join(parts, ", "))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "battery:", err)
	os.Exit(1)
}
