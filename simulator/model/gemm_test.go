package model

import (
	"strings"
	"testing"

	"github.com/kneebench/knee/simulator/sched"
)

// gemmModel is a Llama-3.1-8B shape on a GPU whose products depend on
// their shape; {tiles} is the hardware's gemm_tiles.
const gemmModel = `
hardware:
  gpu: {hbm_gib: 80, memory_bandwidth_gbps: 3350, peak_tflops: 989{tiles}}
models:
  - name: m
    context_length: 8192
    engine: scheduler
    hardware: gpu
    weights: {parameters_billions: 8.03, dtype: bf16}
    architecture: {hidden_size: 4096, attention_heads: 32}
    kv_cache: {layers: 32, kv_heads: 8, head_dim: 128, dtype: bf16}
    scheduler: {max_num_batched_tokens: 8192, max_num_seqs: 256}
`

// TestGEMMTiles: a hardware profile's gemm_tiles reach the cost model (a
// step of 512 tokens computes slower than without them, one of 8,192 as
// fast); figures no GPU has, and a model the tiles cannot shape (experts,
// no architecture), are refused, naming the section.
func TestGEMMTiles(t *testing.T) {
	const hopper = ", gemm_tiles: {sms: 132, tile_rows: 64, tile_cols: 128, tile_efficiency: 0.94, kernel_us: 5, k_pad: 256}"
	step := func(tiles string, tokens int) sched.StepCost {
		t.Helper()
		f, err := ParseModels("m.yml", []byte(strings.Replace(gemmModel, "{tiles}", tiles, 1)))
		if err != nil {
			t.Fatal(err)
		}
		costs := f.SchedConfig(&f.Models[0]).Costs
		return costs.StepTime(sched.Load{Tokens: tokens, Seqs: 1})
	}
	if plain, shaped := step("", 512), step(hopper, 512); !(shaped.Compute > 1.02*plain.Compute) {
		t.Errorf("512 tokens: compute %.3f ms with tiles, %.3f without", shaped.Compute*1e3, plain.Compute*1e3)
	}
	if plain, shaped := step("", 8192), step(hopper, 8192); shaped.Compute != plain.Compute {
		t.Errorf("8,192 tokens: compute %.3f ms with tiles, %.3f without", shaped.Compute*1e3, plain.Compute*1e3)
	}
	for what, file := range map[string]string{
		"experts":         strings.Replace(gemmModel, "    architecture:", "    experts: {count: 8, per_token: 2, parameters_billions: 6}\n    architecture:", 1),
		"no architecture": strings.Replace(gemmModel, "    architecture: {hidden_size: 4096, attention_heads: 32}\n", "", 1),
	} {
		_, err := ParseModels("m.yml", []byte(strings.Replace(file, "{tiles}", hopper, 1)))
		if err == nil || !strings.Contains(err.Error(), `hardware "gpu" has gemm_tiles, which shape a dense model's`) {
			t.Errorf("%s: error %v, want one saying the tiles cannot shape this model", what, err)
		}
	}
	for _, bad := range []string{
		", gemm_tiles: {sms: 0, tile_rows: 64, tile_cols: 128, tile_efficiency: 0.9}",
		", gemm_tiles: {sms: 132, tile_rows: 64, tile_cols: 128, tile_efficiency: 1.5}",
		", gemm_tiles: {sms: 132, tile_rows: 64, tile_cols: 128, tile_efficiency: .nan}",
		", gemm_tiles: {sms: 132, tile_rows: 64, tile_cols: 128, tile_efficiency: 0.9, kernel_us: -1}",
	} {
		_, err := ParseModels("m.yml", []byte(strings.Replace(gemmModel, "{tiles}", bad, 1)))
		if err == nil || !strings.Contains(err.Error(), "gemm_tiles: sms from 1") && !strings.Contains(err.Error(), "tile_efficiency .nan is not a finite") {
			t.Errorf("%s: error %v, want one naming gemm_tiles or its field", bad, err)
		}
	}
}
