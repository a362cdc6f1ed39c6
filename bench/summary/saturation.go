package summary

// This file measures what the saturation verdict rests on: how many
// finished requests kept pace with the offer, and whether the queue grew.

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// completion is one successful measured request as the saturation test
// sees it: when it finished and how long after its origin (its scheduled
// arrival, or for a call's turn the call's arrival), in ms.
type completion struct {
	tag           int32
	doneMs, ageMs int32
	// ttftUs and tpotUs are its TTFT from the schedule and mean
	// inter-token time (-1: none), for the window's slices.
	ttftUs, tpotUs int32
	// weight is how many completions it stands for once a long run's are
	// sampled (completionSample); 0 is one. mark is the hash the sample
	// keeps it by.
	weight float32
	mark   uint32
}

// n is how many completions c stands for.
func (c completion) n() float64 {
	if c.weight == 0 {
		return 1
	}
	return float64(c.weight)
}

// keptPace counts completions over the window shifted by the typical age
// at completion, so that long requests do not read as saturation.
//
// A server that keeps up finishes a request that arrived at t at about
// t + s, where s is the typical (median) age at completion; so the
// completions inside [start+s, end+s) match the arrivals inside
// [start, end) one for one, however long requests are next to the window.
// Counting completions inside [start, end) instead misses the first s of
// them, which is what made long requests in short windows read as
// saturated. A server that falls behind finishes fewer than it was
// offered in any window of that length, shifted or not. Each tag (a
// call's turn number) has its own s, since turn k of a call finishes
// later after the call's arrival than turn k-1.
//
// The result is the number of completions in the shifted window, to be
// set against the number of arrivals in the window.
func keptPace(done []completion, start, end time.Duration) int {
	n, _ := keptPaceEdges(done, start, end)
	return n
}

// keptPaceEdges is keptPace with the share of completions a server keeping
// up would still have in the shifted window, given how widely the ages of
// each tag spread: an arrival at a in [start, end) whose request is age x
// old at completion lands in [start+s, end+s) for a share
// 1 − |x − s|/(end − start) of the arrival times, since no arrival before
// start or after end stands in for the ones that land outside. A call's
// turns spread by the server's time over the turns so far (the caller's
// pauses are taken out of their ages, see collector.add), so a short window
// of calls that kept up counts a few percent fewer of their turns inside
// it; its offer is to be scaled alike.
func keptPaceEdges(done []completion, start, end time.Duration) (int, float64) {
	if end <= start || len(done) == 0 {
		return 0, 1
	}
	span := float64(end.Milliseconds() - start.Milliseconds())
	byTag := map[int32][]completion{}
	for _, c := range done {
		byTag[c.tag] = append(byTag[c.tag], c)
	}
	lo, hi := start.Milliseconds(), end.Milliseconds()
	var n, total float64
	kept := 0.0
	for _, cs := range byTag {
		s := int64(medianAge(cs))
		for _, c := range cs {
			w := c.n()
			total += w
			if t := int64(c.doneMs) - s; t >= lo && t < hi {
				n += w
			}
			kept += w * max(0, 1-math.Abs(float64(int64(c.ageMs)-s))/span)
		}
	}
	return int(math.Round(n)), kept / total
}

// medianAge is the median age of cs, each weighted by what it stands
// for; with every weight one, the age at index len/2 once sorted. It
// sorts cs.
func medianAge(cs []completion) int32 {
	slices.SortFunc(cs, func(a, b completion) int { return cmp.Compare(a.ageMs, b.ageMs) })
	var total, sum float64
	for _, c := range cs {
		total += c.n()
	}
	for _, c := range cs {
		if sum += c.n(); 2*sum > total {
			return c.ageMs
		}
	}
	return cs[len(cs)-1].ageMs
}

// keptPace counts the collector's completions over the schedule window
// [start, end) shifted by their typical age (see the function keptPace).
func (c *collector) keptPace(start, end time.Duration) int {
	n, _ := keptPaceEdges(c.completions(), start, end)
	return n
}

// keptPaceEdges is the function keptPaceEdges over the collector's
// completions.
func (c *collector) keptPaceEdges(start, end time.Duration) (int, float64) {
	return keptPaceEdges(c.completions(), start, end)
}

// completions gathers every shard's completions.
func (c *collector) completions() []completion {
	var done []completion
	for _, s := range c.shards {
		s.mu.Lock()
		done = s.agg.done.appendTo(done)
		s.mu.Unlock()
	}
	return done
}

// completionRate is the rate at which the server kept pace with an offer
// of arrivals in a window at offeredRate: the share of them matched by a
// completion in the shifted window, times the offered rate. Counting and
// offering over the same window keeps small samples honest (nine arrivals
// drawn in a 15 s window are nine, whatever the target rate).
func completionRate(completions int, arrivals int64, offeredRate float64) float64 {
	if arrivals <= 0 || offeredRate <= 0 {
		return 0
	}
	return offeredRate * float64(completions) / float64(arrivals)
}

// minTrendSamples is the fewest completions each third of a window needs
// for queueTrend to compare them.
const minTrendSamples = 10

// queueTrend is the median age at completion (from the scheduled arrival)
// of the requests scheduled in the first and in the last third of the
// schedule window [start, end). A server that keeps up has a queue that
// does not grow, so the two agree; one that falls behind, even by less
// than the 5% of throughput the saturation test allows for noise, serves
// the last third far later than the first. ok is false with fewer than
// minTrendSamples completions in either third.
func queueTrend(done []completion, start, end time.Duration) (first, last time.Duration, ok bool) {
	third := (end - start) / 3
	if third <= 0 {
		return 0, 0, false
	}
	lo, hi := (start + third).Milliseconds(), (end - third).Milliseconds()
	var early, late []completion
	for _, c := range done {
		switch sched := int64(c.doneMs) - int64(c.ageMs); {
		case sched >= start.Milliseconds() && sched < lo:
			early = append(early, c)
		case sched >= hi && sched < end.Milliseconds():
			late = append(late, c)
		}
	}
	if len(early) < minTrendSamples || len(late) < minTrendSamples {
		return 0, 0, false
	}
	ms := func(v int32) time.Duration { return time.Duration(v) * time.Millisecond }
	return ms(medianAge(early)), ms(medianAge(late)), true
}

// queueTrend is the collector's completions' trend over the schedule
// window [start, end) (see the function queueTrend).
func (c *collector) queueTrend(start, end time.Duration) (first, last time.Duration, ok bool) {
	return queueTrend(c.completions(), start, end)
}
