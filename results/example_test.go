package results_test

import (
	"fmt"

	"github.com/kneebench/knee/results"
)

// One verdict: a level meets an SLO when every bound holds, errors stay
// under the rate, and it kept pace with its arrivals.
func ExampleSLO_Judge() {
	bounds, good, err := results.ParseBounds("ttft_p95:500,itl_p99:50")
	if err != nil {
		panic(err)
	}
	slo := results.SLO{Bounds: bounds, MaxErrorRate: 0.02, MinGoodPercent: good}
	run := &results.Run{Health: results.Health{Verdict: results.VerdictHealthy}, Requests: results.Requests{Sent: 100, OK: 100}}
	run.Stats.TTFT = results.Summary{Count: 100, P95: 420}
	run.Stats.ITL = results.Summary{Count: 9900, P99: 61}
	run.Arrivals.OfferedRate, run.Arrivals.CompletionRate = 8, 8
	v := slo.Judge(results.Level{Load: 8, Run: run}, "rate", "")
	fmt.Println(slo)
	fmt.Println(v.Meets, v.Why)
	// Output:
	// ttft p95 ≤ 500 ms, itl p99 ≤ 50 ms, errors under 2%
	// false itl p99 61 ms > 50
}
