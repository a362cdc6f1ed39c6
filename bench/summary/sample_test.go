package summary

import (
	"math"
	"testing"
	"time"
)

// TestSampleKeepsTheVerdictsFigures: a million completions of a server
// keeping up at 1,000/s for 1,000 s, ages spread 100-300 ms and growing in
// the last third (a queue building). Sampled to 16,384 entries, the
// shifted-window count is within 0.1% of the full list's, the share within
// 0.001, and the thirds' medians within 2% (the queue verdict compares
// them at ratios of 1.3 and 2).
func TestSampleKeepsTheVerdictsFigures(t *testing.T) {
	var full []completion
	var s completionSample
	for i := 0; i < 1_000_000; i++ {
		sched := int32(i) // one a millisecond
		age := int32(100 + (i*7919)%200)
		if i > 666_000 {
			age += int32((i - 666_000) / 1000)
		}
		c := completion{doneMs: sched + age, ageMs: age}
		full = append(full, c)
		s.add(c)
	}
	if len(s.list) > maxSampledCompletions {
		t.Fatalf("the sample holds %d, past its %d", len(s.list), maxSampledCompletions)
	}
	start, end := 10*time.Second, 990*time.Second
	nFull, shareFull := keptPaceEdges(append([]completion(nil), full...), start, end)
	nSample, shareSample := keptPaceEdges(s.appendTo(nil), start, end)
	if d := math.Abs(float64(nSample-nFull)) / float64(nFull); d > 0.001 {
		t.Errorf("kept pace: sample %d, full %d (%.3f%% apart)", nSample, nFull, 100*d)
	}
	if math.Abs(shareSample-shareFull) > 0.001 {
		t.Errorf("share: sample %.4f, full %.4f", shareSample, shareFull)
	}
	f1, l1, ok1 := queueTrend(append([]completion(nil), full...), start, end)
	f2, l2, ok2 := queueTrend(s.appendTo(nil), start, end)
	near := func(a, b time.Duration) bool { return math.Abs(float64(a-b)) <= 0.02*float64(a) }
	if !ok1 || !ok2 || !near(f1, f2) || !near(l1, l2) {
		t.Errorf("thirds' medians: full %v/%v (%v), sample %v/%v (%v)", f1, l1, ok1, f2, l2, ok2)
	}
}

// TestSampleIsExactWhileItFits: below its bound the sample is every
// completion, each standing for one.
func TestSampleIsExactWhileItFits(t *testing.T) {
	var s completionSample
	for i := 0; i < maxSampledCompletions; i++ {
		s.add(completion{doneMs: int32(i), ageMs: 5})
	}
	if len(s.list) != maxSampledCompletions || s.list[len(s.list)-1].n() != 1 {
		t.Fatalf("%d kept, the last standing for %g; want all, each for one", len(s.list), s.list[len(s.list)-1].n())
	}
}
