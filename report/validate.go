package report

import (
	"fmt"
	"io"

	"github.com/kneebench/knee/results"
)

// Validation writes knee validate's per-turn table, verdict and diagnosis.
func Validation(w io.Writer, v results.Validation) error {
	rows := [][]string{}
	for _, t := range v.Turns {
		cached := "not reported"
		if t.CachedReported {
			cached = num(float64(t.CachedTokens), 0)
		}
		ttft := "-"
		if t.Error != "" {
			ttft = t.Error
		} else if t.TTFTMs > 0 {
			ttft = ms(t.TTFTMs)
		}
		role := "measured"
		if t.Turn == 1 {
			role = "warm-up"
		}
		rows = append(rows, []string{fmt.Sprintf("%d (%s)", t.Turn, role), num(float64(t.PromptTokens), 0), cached, ttft})
	}
	if err := renderTable(w, []string{"turn", "prompt tokens", "cached tokens", "TTFT ms"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(w, v.Verdict)
	if v.Diagnosis != "" {
		fmt.Fprintln(w, v.Diagnosis)
	}
	return nil
}
