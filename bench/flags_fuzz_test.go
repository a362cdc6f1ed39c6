package bench

import (
	"math"
	"testing"

	"github.com/kneebench/knee/bench/summary"
)

// FuzzFlagLists: the lists a sweep and a call take on the command line
// (--rates, --gap, --goodput), typed by hand. Each parses to values in
// their ranges or an error, never a panic.
func FuzzFlagLists(f *testing.F) {
	for _, s := range []string{"1,2,4", "0.5, 8", "NaN", "1e400", "4,2", "5s,7s", "-1s", "ttft:300,tpot:50",
		"e2el:1e9 ttft_sched:0.001", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if levels, err := ParseLevels(s); err == nil {
			for i, v := range levels {
				if !(v > 0) || math.IsInf(v, 0) || i > 0 && v <= levels[i-1] {
					t.Fatalf("%q: levels %v", s, levels)
				}
			}
		}
		if lo, hi, err := ParseGap(s); err == nil && (lo < 0 || hi < lo) {
			t.Fatalf("%q: gap %v to %v", s, lo, hi)
		}
		if g, err := summary.ParseGoodput(s); err == nil {
			for k, d := range g {
				if d <= 0 {
					t.Fatalf("%q: goodput bound %v %v", s, k, d)
				}
			}
		}
	})
}
