package predict

import (
	"strings"
	"testing"
)

// TestPricesCover: a prices file that leaves out a GPU the plan may
// choose is refused, naming the GPU, the nearest key when it is a typo
// away and what the file prices; one that prices every GPU (and more) is
// taken.
func TestPricesCover(t *testing.T) {
	cands := []*Candidate{{GPU: "h100-80gb"}, {GPU: "l40s"}, {Name: "calibrated.yml"}}
	for _, tc := range []struct {
		prices map[string]float64
		want   string
	}{
		{map[string]float64{"h100": 2.5, "l40s": 1}, "no price for h100-80gb, so no plan can rank it by cost: it prices h100, l40s"},
		{map[string]float64{"h100-80gbb": 2.5, "l40s": 1}, "no price for h100-80gb (is h100-80gbb it?)"},
		{map[string]float64{"h100-80gb": 2.5, "l40s": 1, "b300": 9}, ""},
	} {
		err := PricesCover(tc.prices, "p.yml", cands)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: %v, want %q", tc.prices, err, tc.want)
		}
	}
}
