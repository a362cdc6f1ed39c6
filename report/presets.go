package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kneebench/knee/presets"
)

// Presets lists every preset with its numbers.
func Presets(w io.Writer) error {
	var rows [][]string
	for _, h := range presets.AllHardware() {
		rows = append(rows, []string{h.Name, fmt.Sprintf("%g", h.HBMGiB), num(h.BandwidthGBps, 0), num(h.PeakTFLOPS, 0), h.Source})
	}
	fmt.Fprintln(w, "hardware (knee sim --preset GPU --model-preset MODEL, or --preset GPU/MODEL)")
	if err := renderTable(w, []string{"name", "memory GiB", "bandwidth GB/s", "dense BF16 TFLOPS", "source"}, rows); err != nil {
		return err
	}
	rows = nil
	for _, m := range presets.AllModels() {
		window := "-"
		if m.SlidingWindow > 0 {
			window = fmt.Sprintf("%d (%d global layers)", m.SlidingWindow, m.GlobalLayers)
		}
		rows = append(rows, []string{m.Name, fmt.Sprintf("%g", m.ParamsBillions), fmt.Sprint(m.Layers), fmt.Sprint(m.KVHeads), fmt.Sprint(m.HeadDim),
			window, num(m.KVBytesPerToken(), 0), fmt.Sprint(m.TensorParallel)})
	}
	fmt.Fprintln(w, "\nmodels")
	if err := renderTable(w, []string{"name", "params B", "layers", "KV heads", "head dim", "sliding window", "KV bytes/token", "tensor parallel"}, rows); err != nil {
		return err
	}
	rows = nil
	for _, s := range presets.AllSweeps() {
		rates := make([]string, len(s.Rates))
		for i, r := range s.Rates {
			rates[i] = fmt.Sprintf("%g", r)
		}
		rows = append(rows, []string{s.Name, s.Hardware + "/" + s.Model, strings.Join(rates, ","), fmt.Sprintf("%g", s.SLOMillis), s.Note})
	}
	fmt.Fprintln(w, "\nsweeps (knee sweep --workload voice --preset NAME)")
	return renderTable(w, []string{"name", "simulated as", "calls/s", "SLO ms", "note"}, rows)
}
