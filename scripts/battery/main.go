// Command battery predicts knee's public training battery
// (predict/battery/testdata/cells.csv) and prints each cell's error, the
// median error of each metric, and with -cv the leave-one-source-out
// cross-validation: each source's cells predicted by a tuning fitted,
// family by family, to the other sources only. docs/fidelity.md quotes
// its output.
//
// Usage (from the repository root):
//
//	go run ./scripts/battery            # shipped tuning
//	go run ./scripts/battery -cv        # and cross-validation (minutes)
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"

	"github.com/kneebench/knee/predict/battery"
)

func main() {
	cv := flag.Bool("cv", false, "also cross-validate, leaving one source out at a time")
	evals := flag.Int("evals", 120, "with -cv: the most evaluations of a family's fit")
	path := flag.String("cells", "predict/battery/testdata/cells.csv", "the battery's cells")
	flag.Parse()
	f, err := os.Open(*path)
	if err != nil {
		fail(err)
	}
	cells, err := battery.Read(f)
	f.Close()
	if err != nil {
		fail(err)
	}
	workers := runtime.GOMAXPROCS(0)
	shipped := battery.Evaluate(cells, nil, workers)
	fmt.Println("## shipped tuning")
	table(shipped)
	medians("shipped", shipped)
	if !*cv {
		return
	}
	folds, err := battery.CrossValidate(cells, *evals, workers)
	if err != nil {
		fail(err)
	}
	var all []battery.Result
	for _, fold := range folds {
		fmt.Printf("\n## left out: %s\n", fold.Source)
		for fam, t := range fold.Tuning {
			fmt.Printf("fitted %s: compute %.3f, memory %.3f, step %.2f ms, per sequence %.3f ms\n",
				fam, t.ComputeEff, t.MemoryEff, t.StepOverhead*1000, t.SeqOverhead*1000)
		}
		table(fold.Results)
		medians(fold.Source, fold.Results)
		all = append(all, fold.Results...)
	}
	fmt.Println()
	medians("cross-validated", all)
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
