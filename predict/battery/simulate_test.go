package battery

import (
	"testing"
)

// TestPreemptedRequestsKeepTheirBlocks: a cache that holds one 32,000-token
// prompt and part of the next preempts the next again and again as the
// first one's answer grows. With content (as knee predict sends), a
// readmitted request finds its computed blocks still cached and
// recomputes only what was evicted; without it, every preemption starts
// the prompt over. The cell is GPUStack's Qwen3-32B burst on one A100.
func TestPreemptedRequestsKeepTheirBlocks(t *testing.T) {
	var cell *Cell
	for _, c := range readCells(t) {
		if c.Name == "gpustack/a100-80gb/qwen3-32b/vllm-bf16/32000" {
			cell = c
		}
	}
	if cell == nil {
		t.Fatal("the cell is gone from testdata/cells.csv")
	}
	short := *cell
	short.Requests = 6
	cfg, _, err := short.Config()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.PrefixCaching || cfg.NumBlocks*cfg.BlockSize >= 2*(short.Input+short.Output) {
		t.Fatalf("the cell no longer starves: prefix caching %v, %d blocks", cfg.PrefixCaching, cfg.NumBlocks)
	}
	with, err := run(cfg, &short)
	if err != nil {
		t.Fatal(err)
	}
	cfg.PrefixCaching = false
	without, err := run(cfg, &short)
	if err != nil {
		t.Fatal(err)
	}
	// 141 against 358 s when written.
	t.Logf("span with content %.0f s, without %.0f s", with.span, without.span)
	if with.span > 0.6*without.span {
		t.Errorf("span with content %.0f s, without %.0f s: readmission recomputed what was cached", with.span, without.span)
	}
}
