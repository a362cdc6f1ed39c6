package results

import "fmt"

// MinPercentileSamples is the fewest samples a p95 can rest on before it
// is just the largest value seen: with 11 requests, p95 is the maximum.
const MinPercentileSamples = 20

// SmallPrint says what a reader of the figures must know: a p95 that rests
// on too few requests, and a drawn schedule far from the rate asked.
func SmallPrint(res *Run) []string {
	var out []string
	if n := res.Stats.TTFT.Count; n > 0 && n < MinPercentileSamples {
		out = append(out, fmt.Sprintf("the latency percentiles rest on %s: with fewer than %d, p95 and p99 are the largest values seen; measure longer", Plural(n, "request"), MinPercentileSamples))
	}
	a := res.Arrivals
	if a.TargetRate > 0 && a.OfferedRate > 0 {
		if off := a.OfferedRate/a.TargetRate - 1; off < -0.1 || off > 0.1 {
			out = append(out, fmt.Sprintf("the Poisson schedule drawn for this window offered %.2f/s against the %.2f/s asked (%+.0f%%): a short window holds few arrivals; "+
				"saturation is judged against what was offered, and a longer window (or another --seed) narrows the gap", a.OfferedRate, a.TargetRate, 100*off))
		}
	}
	return out
}
