package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kneebench/knee/presets"
)

// Presets lists every preset with every number that shapes its timing.
func Presets(w io.Writer) error {
	for _, part := range []func(io.Writer) error{presetGPUs, presetModels, presetSweeps} {
		if err := part(w); err != nil {
			return err
		}
	}
	return nil
}

// presetGPUs is the GPUs, their families' cost-model tuning and the
// engine's defaults on them.
func presetGPUs(w io.Writer) error {
	var rows [][]string
	families := map[string]presets.Tuning{}
	var order []string
	for _, h := range presets.AllHardware() {
		fp8 := "-"
		if h.PeakTFLOPS8 > 0 {
			fp8 = num(h.PeakTFLOPS8, 0)
		}
		rows = append(rows, []string{h.Name, h.Family, fmt.Sprintf("%g", h.HBMGiB), num(h.BandwidthGBps, 0), num(h.PeakTFLOPS, 0), fp8,
			fmt.Sprintf("%s %g GB/s, %g µs", h.Interconnect, h.InterconnectGBps, h.InterconnectLatencyUs)})
		if _, ok := families[h.Family]; !ok {
			order = append(order, h.Family)
		}
		families[h.Family] = h.Tuning
	}
	Wrap(w, 2, "GPUs (knee sim --preset GPU[xN]/MODEL[@DTYPE[,kv=DTYPE]], e.g. h100-80gbx2/llama-3.1-70b@fp8)\n")
	if err := renderTable(w, []string{"name", "family", "memory GB", "bandwidth GB/s", "BF16 TFLOPS", "FP8 TFLOPS", "interconnect (one way, per all-reduce)"}, rows); err != nil {
		return err
	}
	rows = nil
	for _, f := range order {
		t := families[f]
		ar := "link's"
		if t.AllReduceLatencyUs > 0 {
			ar = fmt.Sprintf("%g", t.AllReduceLatencyUs)
		}
		rows = append(rows, []string{f, fmt.Sprintf("%g", t.ComputeEff), fmt.Sprintf("%g", t.MemoryEff), fmt.Sprintf("%g", t.StepOverheadMs), fmt.Sprintf("%g", t.SeqOverheadMs), ar, t.Source})
	}
	Wrap(w, 2, "\ncost model tuning per GPU family (step = max(compute, memory) + all-reduces + step overhead + per-sequence overhead × batch)\n")
	if err := renderTable(w, []string{"family", "compute eff", "memory eff", "step ms", "per-seq ms", "all-reduce µs", "source"}, rows); err != nil {
		return err
	}
	Wrap(w, 2, "batching: 8,192 batched tokens and 1,024 sequences on GPUs of 70 GB or more other than the A100, else 2,048 and 256 (vLLM's defaults);\n")
	Wrap(w, 2, "KV cache: 90% of memory less the weights and a 2 GiB reserve per GPU, blocks of 16 tokens, prefix caching on\n")
	return presetGEMM(w, order)
}

// presetGEMM is the families' matrix products by shape, which a models
// file's hardware opts into (gemm_tiles); the presets leave them out.
func presetGEMM(w io.Writer, families []string) error {
	var rows [][]string
	for _, f := range families {
		if g, ok := presets.GEMMFitFor(f); ok {
			rows = append(rows, []string{f, fmt.Sprint(g.SMs), fmt.Sprint(g.TileRows), fmt.Sprint(g.TileCols),
				fmt.Sprintf("%g", g.TileEff), fmt.Sprintf("%g", g.KernelUs), fmt.Sprint(g.KPad), fmt.Sprintf("%.1f%%", g.MedianErrPct)})
		}
	}
	Wrap(w, 2, "\nmatrix products by shape, opt-in: a models file's hardware gemm_tiles (the presets leave it out), "+
		"fitted to XLA's public matmul table (error: median of a product's time; docs/fidelity.md)\n")
	return renderTable(w, []string{"family", "sms", "tile_rows", "tile_cols", "tile_efficiency", "kernel_us", "k_pad", "error"}, rows)
}

// presetModels is the models and their shapes.
func presetModels(w io.Writer) error {
	var rows [][]string
	for _, m := range presets.AllModels() {
		window, experts := "-", "-"
		if m.SlidingWindow > 0 {
			window = fmt.Sprintf("%d (%d global)", m.SlidingWindow, m.GlobalLayers)
		}
		if m.Experts > 0 {
			experts = fmt.Sprintf("%d, top %d", m.Experts, m.ExpertsPerToken)
		}
		name := m.Name
		if len(m.Aliases) > 0 {
			name += " (" + strings.Join(m.Aliases, ", ") + ")"
		}
		rows = append(rows, []string{name, fmt.Sprintf("%g", m.ParamsBillions), fmt.Sprintf("%.3g", m.ActiveParamsBillions()), fmt.Sprint(m.Layers),
			fmt.Sprint(m.HiddenSize), vocabOf(m), fmt.Sprintf("%d/%d×%d", m.AttentionHeads, m.KVHeads, m.HeadDim), window, experts,
			num(m.KVBytesPerToken(2), 0), fmt.Sprint(m.TensorParallel)})
	}
	Wrap(w, 2, "\nmodels (weights bf16 unless @fp8, @int8 or @int4; KV bf16 unless kv=fp8)\n")
	return renderTable(w, []string{"name", "params B", "active B", "layers", "hidden", "vocab", "heads/KV×dim", "sliding window", "experts", "KV B/token", "TP"}, rows)
}

// vocabOf is a model's vocabulary, marked tied when its LM head is its
// embedding table.
func vocabOf(m presets.Model) string {
	if m.TiedEmbeddings {
		return num(float64(m.VocabSize), 0) + " tied"
	}
	return num(float64(m.VocabSize), 0)
}

// presetSweeps is the voice sweeps' presets.
func presetSweeps(w io.Writer) error {
	var rows [][]string
	for _, s := range presets.AllSweeps() {
		rates := make([]string, len(s.Rates))
		for i, r := range s.Rates {
			rates[i] = fmt.Sprintf("%g", r)
		}
		rows = append(rows, []string{s.Name, s.Hardware + "/" + s.Model, strings.Join(rates, ","), fmt.Sprintf("%g", s.SLOMillis), s.Note})
	}
	Wrap(w, 2, "\nsweeps (knee sweep --workload voice --preset NAME)\n")
	return renderTable(w, []string{"name", "simulated as", "calls/s", "SLO ms", "note"}, rows)
}
