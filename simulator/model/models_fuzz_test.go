package model

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/kneebench/knee/simulator/sched"
)

// FuzzModelsFile: a models file is the user's own YAML (knee sim
// --models, --sim-models). Whatever it holds, parsing ends in a model or
// an error naming what is wrong, never a panic; a scheduler model it
// accepts has a KV cache of at least one block and finite, positive
// step times, and two short requests on it finish in virtual time.
func FuzzModelsFile(f *testing.F) {
	if b, err := os.ReadFile("builtin/models.yml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(schedModel))
	f.Add([]byte("models:\n  - {name: p, preset: h100-80gbx1/llama-3.1-8b}\n"))
	f.Add([]byte("models:\n  - name: f\n    context_length: 10\n    engine: fixed_rate\n    fixed_rate: {decode_tokens_per_second: .nan}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mf, err := ParseModels("fuzz.yml", data)
		if err != nil {
			return
		}
		for i := range mf.Models {
			m := &mf.Models[i]
			if m.Engine != EngineScheduler {
				continue
			}
			checkSchedModel(t, m.Name, mf.SchedConfig(m), m.ContextLength)
		}
	})
}

func checkSchedModel(t *testing.T, name string, cfg sched.Config, context int) {
	t.Helper()
	if cfg.NumBlocks < 1 {
		t.Fatalf("model %q: a KV cache of %d blocks", name, cfg.NumBlocks)
	}
	for _, l := range []sched.Load{{Tokens: 1, Seqs: 1}, {Tokens: cfg.MaxNumBatchedTokens, Seqs: 1}} {
		d := cfg.Costs.StepTime(l).Duration
		if math.IsNaN(d) || math.IsInf(d, 0) || d <= 0 {
			t.Fatalf("model %q: a step of %d tokens takes %v s", name, l.Tokens, d)
		}
	}
	// A request the cache cannot hold is refused by knee sim and knee
	// predict before it runs; run what fits.
	fit := cfg.LongestFit(context)
	if fit < 5 {
		return
	}
	prompt := max(min(64, context/2, fit-4), 1)
	out := sched.RunVirtual(cfg, []sched.Request{
		{ID: 1, PromptLen: prompt, OutputLen: 4}, {ID: 2, Arrival: 0.001, PromptLen: prompt, OutputLen: 4},
	}, nil)
	for _, o := range out {
		if o.Tokens != 4 || math.IsNaN(o.E2E()) || math.IsInf(o.E2E(), 0) {
			t.Fatalf("model %q: request %d made %d of 4 tokens, E2E %v", name, o.ID, o.Tokens, o.E2E())
		}
	}
}

// FuzzModelsNumbers fills a scheduler model's every number from the
// fuzzer, where FuzzModelsFile's mutations of text rarely reach a valid
// file: whatever the values, the file is refused or its model runs.
func FuzzModelsNumbers(f *testing.F) {
	f.Add(80.0, 3000.0, 989.0, 7.0, 2.0, 524288.0, 4096, 2048, 8, 0.9, 0.5, 0.8, 2.0)
	f.Add(0.5, 1e-3, 1e-3, 1e-3, 0.5, 1.0, 1, 1, 1, 0.01, 0.001, 0.001, 0.0)
	f.Add(1e6, 1e9, 1e9, 1e4, 4.0, 1e9, 10_000_000, 10_000_000, 100_000, 1.0, 1.0, 1.0, 1e3)
	f.Fuzz(func(t *testing.T, hbm, bw, peak, params, bpp, kvb float64, ctx, mbt, mns int,
		util, ce, me, stepMs float64) {
		file := fmt.Sprintf(`
hardware:
  gpu: {hbm_gib: %v, memory_bandwidth_gbps: %v, peak_tflops: %v}
models:
  - name: m
    context_length: %d
    engine: scheduler
    hardware: gpu
    weights: {parameters_billions: %v, bytes_per_parameter: %v}
    kv_cache: {bytes_per_token: %v, gpu_memory_utilization: %v}
    scheduler: {max_num_batched_tokens: %d, max_num_seqs: %d}
    efficiency: {compute: %v, memory: %v}
    latency: {step_overhead_ms: %v}
`, hbm, bw, peak, ctx, params, bpp, kvb, util, mbt, mns, ce, me, stepMs)
		mf, err := ParseModels("fuzz.yml", []byte(file))
		if err != nil {
			return
		}
		m := &mf.Models[0]
		checkSchedModel(t, m.Name, mf.SchedConfig(m), m.ContextLength)
	})
}

// FuzzGEMMTiles fills a hardware profile's gemm_tiles from the fuzzer:
// whatever the figures, the file is refused or its model's requests end
// in finite time.
func FuzzGEMMTiles(f *testing.F) {
	f.Add(132, 64, 128, 0.94, 5.0, 256)
	f.Add(1, 1, 1, 0.001, 1e6, 1<<20)
	f.Add(1<<16, 4096, 4096, 1.0, 0.0, 0)
	f.Fuzz(func(t *testing.T, sms, rows, cols int, eff, kernelUs float64, kpad int) {
		tiles := fmt.Sprintf(", gemm_tiles: {sms: %d, tile_rows: %d, tile_cols: %d, tile_efficiency: %v, kernel_us: %v, k_pad: %d}",
			sms, rows, cols, eff, kernelUs, kpad)
		mf, err := ParseModels("fuzz.yml", []byte(strings.Replace(gemmModel, "{tiles}", tiles, 1)))
		if err != nil {
			return
		}
		m := &mf.Models[0]
		checkSchedModel(t, m.Name, mf.SchedConfig(m), m.ContextLength)
	})
}

// FuzzVocabSize fills a model's architecture from the fuzzer: whatever
// the vocabulary, hidden size and parameters, the file is refused or its
// requests end in finite time, and a step never costs more with the
// vocabulary known than without it (the term only leaves work out).
func FuzzVocabSize(f *testing.F) {
	f.Add(128256, 4096, false, 8.03)
	f.Add(262208, 3840, true, 12.2)
	f.Add(1, 1, false, 0.001)
	f.Add(1<<24, 1<<24, true, 1e6)
	f.Fuzz(func(t *testing.T, vocab, hidden int, tied bool, billions float64) {
		arch := fmt.Sprintf("{hidden_size: %d, attention_heads: 32, vocab_size: %d, tied_embeddings: %v}", hidden, vocab, tied)
		file := strings.Replace(strings.Replace(gemmModel, "{tiles}", "", 1), "{hidden_size: 4096, attention_heads: 32}", arch, 1)
		file = strings.Replace(file, "parameters_billions: 8.03", fmt.Sprintf("parameters_billions: %v", billions), 1)
		mf, err := ParseModels("fuzz.yml", []byte(file))
		if err != nil {
			return
		}
		m := &mf.Models[0]
		with := mf.SchedConfig(m)
		checkSchedModel(t, m.Name, with, m.ContextLength)
		m.Architecture.VocabSize = 0
		without := mf.SchedConfig(m)
		for _, l := range []sched.Load{{Tokens: 4096, Seqs: 1}, {Tokens: 64, Seqs: 64}, {Tokens: 1, Seqs: 1}} {
			a, b := with.Costs.StepTime(l), without.Costs.StepTime(l)
			if a.Compute > b.Compute*(1+1e-12) || a.Memory > b.Memory*(1+1e-12) {
				t.Fatalf("%+v: with the vocabulary compute %g memory %g, without %g and %g", l, a.Compute, a.Memory, b.Compute, b.Memory)
			}
		}
	})
}
