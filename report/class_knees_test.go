package report

import (
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestClassKneeNotJudged: a class no level judged is said to be not
// judged, never to have missed its SLO at the lightest load.
func TestClassKneeNotJudged(t *testing.T) {
	var b strings.Builder
	classKnees(&b, &results.Sweep{ClassKnees: []results.ClassKnee{{Class: "rare", SLO: "e2e_sched_p95:3000"}}}, "/s")
	if out := b.String(); !strings.Contains(out, "rare: not judged") || strings.Contains(out, "missed") {
		t.Errorf("class line:\n%s", out)
	}
}
