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
	// Arrivals is how many arrivals the open-loop window offered (calls,
	// for a call workload; 0 when unknown): a shortfall of fewer than
	// MinShortfall of them is sampling noise, not saturation.
	Arrivals int64
	// Excluded levels (client unhealthy, failed) take no part in any knee.
	Excluded bool
	// QueueGrowth is how much its queue grew through its window (open
	// loop; see QueueGrowth), 0 when it did not or is unknown.
	QueueGrowth float64
	// Unreliable levels' latencies are not believed (too many of their
	// requests are missing from the percentiles): the SLO cannot be said
	// to hold there and the curve leaves them out, but their throughput
	// counts toward saturation.
	Unreliable bool
}

// MinShortfall is the fewest arrivals a level must fall behind by to count
// as saturated: with nine arrivals in a window, one that finished a moment
// past the shifted window's edge is 11% and no evidence of anything.
const MinShortfall = 2

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
		if p.Unreliable || p.Latency > threshold || p.ErrorRate >= maxErrorRate || math.IsNaN(p.Latency) {
			break
		}
		best = i
	}
	return best, best >= 0
}

// Flatness thresholds of the curvature knee: a curve whose latency at its
// highest load is less than MinRiseOfBase above its lowest-load latency,
// or less than MinRiseOfSLO of the SLO threshold above it, has no knee to
// report. A knee on such a curve would name a level where nothing happens
// (a curve from 41 to 42 ms has a Kneedle maximum too, at noise; one from
// 30 to 75 ms against a 300 ms SLO bends where no one would notice).
const (
	MinRiseOfBase = 0.5
	MinRiseOfSLO  = 0.25
)

// CurveShape says why a curvature knee was or was not found.
type CurveShape string

// Curve shapes.
const (
	CurveKnee     CurveShape = "knee"
	CurveFewer    CurveShape = "fewer than three levels"
	CurveFlat     CurveShape = "flat"
	CurveStraight CurveShape = "no bend"
)

// CurvatureKnee is the Kneedle elbow of a rising latency curve: both axes
// are normalised to [0, 1], and the knee is the level where the normalised
// load most exceeds the normalised latency, which is where the curve turns
// from flat to steep. It needs three levels and a curve that rises
// materially from its lowest load to its highest (see MinRiseOfBase and
// MinRiseOfSLO; sloMs ≤ 0 skips the SLO test), and more steeply than a
// straight line somewhere; otherwise ok is false and the shape says which
// condition failed. Falling or noisy curves end where they started and
// count as flat.
func CurvatureKnee(points []Point, sloMs float64) (int, CurveShape) {
	var idx []int
	for i, p := range points {
		if !p.Excluded && !p.Unreliable && !math.IsNaN(p.Latency) && !math.IsInf(p.Latency, 0) {
			idx = append(idx, i)
		}
	}
	if len(idx) < 3 {
		return -1, CurveFewer
	}
	first, last := points[idx[0]].Latency, points[idx[len(idx)-1]].Latency
	rise := last - first
	if rise <= MinRiseOfBase*first || (sloMs > 0 && rise <= MinRiseOfSLO*sloMs) {
		return -1, CurveFlat
	}
	x0, x1 := points[idx[0]].Load, points[idx[len(idx)-1]].Load
	y0, y1 := math.Inf(1), math.Inf(-1)
	for _, i := range idx {
		y0 = math.Min(y0, points[i].Latency)
		y1 = math.Max(y1, points[i].Latency)
	}
	if x1 <= x0 || y1 <= y0 {
		return -1, CurveFlat
	}
	best, bestDiff := -1, 0.0
	for _, i := range idx {
		xn := (points[i].Load - x0) / (x1 - x0)
		yn := (points[i].Latency - y0) / (y1 - y0)
		if d := xn - yn; d > bestDiff+1e-12 {
			best, bestDiff = i, d
		}
	}
	if best < 0 {
		return -1, CurveStraight
	}
	return best, CurveKnee
}

// A server that keeps up serves the requests of a window's last third as
// fast as its first third's, however bursty the arrivals; one that falls
// behind serves them later and later. The growth of the median age at
// completion from the first third to the last (Arrivals.AgeFirstThirdMs)
// is saturation on its own past QueueGrowthStrong times, and with a
// throughput shortfall of more than ShortfallWithGrowth past
// QueueGrowthWeak times (a deficit of 3% builds a queue forever, which a
// noise margin of 5% alone lets pass); never for growth under
// QueueGrowthMinMs.
const (
	QueueGrowthStrong   = 2.0
	QueueGrowthWeak     = 1.3
	QueueGrowthMinMs    = 500
	ShortfallWithGrowth = 0.02
)

// QueueGrowth is how many times longer a window's last third of requests
// took than its first third, 0 when unknown or under QueueGrowthMinMs.
func QueueGrowth(a Arrivals) float64 {
	if a.AgeFirstThirdMs <= 0 || a.AgeLastThirdMs-a.AgeFirstThirdMs <= QueueGrowthMinMs {
		return 0
	}
	return a.AgeLastThirdMs / a.AgeFirstThirdMs
}

// SaturationLevel is the first level where achieved throughput stops
// tracking the offered load: under 95% of what a server keeping up would
// deliver for open-loop levels, and, for closed-loop levels (no expected
// throughput), growing too little for the streams added (see
// MinClosedLoopStep); a level a heavier one outpaced is passed over
// (outpacedBy).
func SaturationLevel(points []Point) (int, bool) {
	for i, p := range points {
		if p.Excluded {
			continue
		}
		if p.ExpectedThroughput > 0 {
			short := 1 - p.Throughput/p.ExpectedThroughput
			// A shortfall of fewer than MinShortfall arrivals is noise,
			// with or without a queue that seems to grow.
			counted := p.Arrivals == 0 || short*float64(p.Arrivals) >= MinShortfall
			if (short > 0.05 && counted || p.QueueGrowth >= QueueGrowthStrong ||
				p.QueueGrowth >= QueueGrowthWeak && short > ShortfallWithGrowth && counted) && outpacedBy(points, i) < 0 {
				return i, true
			}
		} else if ref := closedLoopReference(points, i); ref >= 0 {
			gain := p.Throughput/points[ref].Throughput - 1
			loadGain := p.Load/points[ref].Load - 1
			if gain < min(loadGain/4, MaxClosedLoopGain) && outpacedBy(points, i) < 0 {
				return i, true
			}
		}
	}
	return -1, false
}

// A closed loop saturates where more streams stop buying throughput. Each
// level is set against the last level judged at least MinClosedLoopStep
// times lighter (finely spaced levels, 10 then 11 streams, differ by less
// than their noise): saturated when its throughput grew by less than a
// quarter of its load, and less than MaxClosedLoopGain (a doubling of
// streams for 8% more throughput).
const (
	MinClosedLoopStep = 1.2
	MaxClosedLoopGain = 0.10
)

// closedLoopReference is the level point i is judged against (see
// MinClosedLoopStep), or -1.
func closedLoopReference(points []Point, i int) int {
	for j := i - 1; j >= 0; j-- {
		if q := points[j]; !q.Excluded && q.Throughput > 0 && points[i].Load >= MinClosedLoopStep*q.Load {
			return j
		}
	}
	return -1
}
