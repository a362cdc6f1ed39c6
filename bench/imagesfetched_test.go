package bench

import (
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestImagesFetchedSaid: the images knee served that the target fetched
// over a level are counted; none fetched is warned of, since the target
// then answered without them.
func TestImagesFetchedSaid(t *testing.T) {
	for _, fetched := range []int{0, 6} {
		is := &imageServer{}
		s := &Series{Workload: Workload{imageServer: is}}
		f := &finisher{s: s, served: is.count(0)}
		is.count(fetched)
		res := &results.Run{Images: &results.Images{Images: 6}}
		f.imagesFetched(res)
		if res.Images.Served == nil || *res.Images.Served != int64(fetched) {
			t.Errorf("%d fetched: served %v", fetched, res.Images.Served)
		}
		if warned := strings.Contains(strings.Join(res.Warnings, " "), "fetched none of the 6 images"); warned != (fetched == 0) {
			t.Errorf("%d fetched: warnings %v", fetched, res.Warnings)
		}
	}
}
