package results

import "math"

// Point is one level of a sweep as the knee functions see it.
type Point struct {
	// Load is the offered load: a rate (requests or calls per second) or a
	// concurrency.
	Load float64
	// Latency is the SLO metric at the SLO percentile, in ms.
	Latency float64
	// ErrorRate is the failed share of finished requests.
	ErrorRate float64
	// Throughput is what was achieved, in the same unit as an offered rate
	// (requests or turns per second).
	Throughput float64
	// ExpectedThroughput is the throughput a server keeping up would
	// deliver (the offered rate, or turns per second for calls); zero for
	// closed-loop levels.
	ExpectedThroughput float64
	// Excluded levels (client unhealthy, failed) take no part in any knee.
	Excluded bool
}

// SLOKnee returns the index of the largest level that meets the SLO:
// latency at most threshold and error rate under maxErrorRate. Only the
// run of passing levels from the lowest load up counts, so a lucky level
// past the first failure cannot move the knee up. ok is false when the
// lowest level already fails.
func SLOKnee(points []Point, threshold, maxErrorRate float64) (int, bool) {
	best := -1
	for i, p := range points {
		if p.Excluded {
			continue
		}
		if p.Latency > threshold || p.ErrorRate >= maxErrorRate || math.IsNaN(p.Latency) {
			break
		}
		best = i
	}
	return best, best >= 0
}

// CurvatureKnee is the Kneedle elbow of a rising latency curve: both axes
// are normalised to [0, 1], and the knee is the level where the normalised
// load most exceeds the normalised latency, which is where the curve turns
// from flat to steep. It needs three levels and a curve that actually rises
// more steeply than a straight line somewhere; otherwise ok is false.
func CurvatureKnee(points []Point) (int, bool) {
	var idx []int
	for i, p := range points {
		if !p.Excluded && !math.IsNaN(p.Latency) && !math.IsInf(p.Latency, 0) {
			idx = append(idx, i)
		}
	}
	if len(idx) < 3 {
		return -1, false
	}
	x0, x1 := points[idx[0]].Load, points[idx[len(idx)-1]].Load
	y0, y1 := math.Inf(1), math.Inf(-1)
	for _, i := range idx {
		y0 = math.Min(y0, points[i].Latency)
		y1 = math.Max(y1, points[i].Latency)
	}
	if x1 <= x0 || y1 <= y0 {
		return -1, false
	}
	best, bestDiff := -1, 0.0
	for _, i := range idx {
		xn := (points[i].Load - x0) / (x1 - x0)
		yn := (points[i].Latency - y0) / (y1 - y0)
		if d := xn - yn; d > bestDiff+1e-12 {
			best, bestDiff = i, d
		}
	}
	return best, best >= 0
}

// SaturationLevel is the first level where achieved throughput stops
// tracking the offered load: under 95% of what a server keeping up would
// deliver for open-loop levels, and, for closed-loop levels (no expected
// throughput), under 5% more than the level before despite more load.
func SaturationLevel(points []Point) (int, bool) {
	prev := -1
	for i, p := range points {
		if p.Excluded {
			continue
		}
		if p.ExpectedThroughput > 0 {
			if p.Throughput < 0.95*p.ExpectedThroughput {
				return i, true
			}
		} else if prev >= 0 && points[prev].Throughput > 0 && p.Load > points[prev].Load &&
			p.Throughput < 1.05*points[prev].Throughput {
			return i, true
		}
		prev = i
	}
	return -1, false
}
