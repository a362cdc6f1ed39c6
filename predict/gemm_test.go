package predict

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kneebench/knee/simulator/model"
	"github.com/kneebench/knee/simulator/sched"
)

// TestCandidatesWithGEMMTiles: asked for products by shape, a dense model
// on a GPU family with a fitted kernel table is shaped and named so, and
// its large-tensor-parallel steps cost more than unshaped; a GPU without
// a table and a mixture-of-experts model keep one efficiency and their
// names.
func TestCandidatesWithGEMMTiles(t *testing.T) {
	spec := CandidateSpec{GPUs: "h100-80gb,a100-80gb", Models: "llama-3.1-70b,mixtral-8x7b", TPs: "8", GEMMTiles: true}
	cands, err := spec.Candidates()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cands {
		cfg, _, err := c.Target.Config()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		shaped := strings.HasSuffix(c.Name, gemmSuffix)
		if shaped != cfg.Costs.ShapedProducts() {
			t.Errorf("%s: named shaped %v, costs shaped %v", c.Name, shaped, cfg.Costs.ShapedProducts())
		}
		got = append(got, c.Name)
	}
	want := "h100-80gbx8/llama-3.1-70b@bf16 · gemm_tiles, h100-80gbx8/mixtral-8x7b@bf16, " +
		"a100-80gbx8/llama-3.1-70b@bf16, a100-80gbx8/mixtral-8x7b@bf16"
	if strings.Join(got, ", ") != want {
		t.Errorf("candidates %q, want %q", strings.Join(got, ", "), want)
	}
	spec.GEMMTiles = false
	plain, err := spec.Candidates()
	if err != nil {
		t.Fatal(err)
	}
	shapedCfg, _, _ := cands[0].Target.Config()
	plainCfg, _, _ := plain[0].Target.Config()
	if plain[0].Name+gemmSuffix != cands[0].Name || plainCfg.Costs.ShapedProducts() {
		t.Fatalf("unasked: %s shaped %v", plain[0].Name, plainCfg.Costs.ShapedProducts())
	}
	for _, tokens := range []int{512, 8192} {
		a := shapedCfg.Costs.StepTime(costLoad(tokens))
		b := plainCfg.Costs.StepTime(costLoad(tokens))
		if !(a.Compute > b.Compute) {
			t.Errorf("%d tokens on eight GPUs: compute %.3f ms shaped, %.3f plain", tokens, a.Compute*1e3, b.Compute*1e3)
		}
	}
}

func costLoad(tokens int) sched.Load { return sched.Load{Tokens: tokens, Seqs: 1} }

// TestTargetWithGEMMTiles: knee predict's --gemm-tiles shapes a preset on
// a fitted family and says so in the origin; a models file, a GPU without
// a table and a model with experts are refused, each saying why.
func TestTargetWithGEMMTiles(t *testing.T) {
	tgt, origin, err := TargetSpec{Preset: "h100-80gbx8/llama-3.1-70b", Responses: "builtin:bench-responses", GEMMTiles: true}.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := tgt.Config()
	if err != nil || !cfg.Costs.ShapedProducts() || origin != "h100-80gbx8/llama-3.1-70b"+gemmSuffix {
		t.Fatalf("origin %q, shaped %v, err %v", origin, cfg.Costs.ShapedProducts(), err)
	}
	for _, tc := range []struct {
		spec TargetSpec
		why  string
	}{
		{TargetSpec{Models: "builtin:models", GEMMTiles: true}, "a --sim-models file gives its hardware gemm_tiles itself"},
		{TargetSpec{Preset: "a100-80gb/llama-3.1-8b", GEMMTiles: true}, "a100-80gb is ampere, which has no fitted kernel table"},
		{TargetSpec{Preset: "h100-80gbx2/mixtral-8x7b", GEMMTiles: true}, "its model routes experts"},
	} {
		_, _, err := tc.spec.Load(context.Background())
		if !errors.As(err, new(*model.UsageError)) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%+v: error %v, want a usage error saying %q", tc.spec, err, tc.why)
		}
	}
}
