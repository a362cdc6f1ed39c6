package predict

import (
	"strings"
	"testing"

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
