package content

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestIDCacheTokenisesAsAppendTokenIDs holds a cache's ids to
// tokenising afresh: texts short and long, seen again and new, through
// the cache starting over when full, and after dst's own ids.
func TestIDCacheTokenisesAsAppendTokenIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	texts := make([]string, 12)
	for k := range texts {
		n := 20 + r.IntN(3000)
		texts[k] = strings.Join(fillerTokens(n, r.Uint64()), "") + " — naïve, don't 3.14"
	}
	for _, limit := range []int{0, 1500} {
		c := &IDCache{limit: limit}
		for trial := range 200 {
			text := texts[r.IntN(len(texts))]
			got := c.appendIDs([]uint64{1, 2}, text)
			if want := AppendTokenIDs([]uint64{1, 2}, text); !reflect.DeepEqual(got, want) {
				t.Fatalf("limit %d, trial %d: the cache gives %d ids, tokenising %d", limit, trial, len(got), len(want))
			}
			if limit > 0 && c.kept > limit {
				t.Fatalf("%d ids kept past the limit of %d", c.kept, limit)
			}
		}
		if limit == 0 && len(c.ids) == 0 {
			t.Error("nothing was kept")
		}
	}
	var none *IDCache
	if got, want := none.appendIDs(nil, texts[0]), AppendTokenIDs(nil, texts[0]); !reflect.DeepEqual(got, want) {
		t.Error("a nil cache tokenises otherwise")
	}
}
