package bench

import (
	"math"

	"github.com/kneebench/knee/workload"
)

// maxSearch bounds the probes refine's search sends.
const maxSearch = 10

// meanOf is how many probes (each opening with its own words) a mean
// count is taken over.
const meanOf = 8

// prober counts a synthetic prompt as the server does: at probe index k,
// or, with k = 0, at the next index unused.
type prober func(s workload.Synthetic, k int) (int, bool)

// refine searches the word count of fit's own text for the prompt whose
// count (as the server counts it) is nearest want, starting from the
// fit, whose probe counted got: steps of the fit's slope until want is
// bracketed, then halving. Prompts of one length share all their words
// but the opening few, so the count of the one found is then taken as
// the mean over meanOf prompts, and what it falls short of want is padded
// with PadWords, as many as a probe of one pad word says fill it best. own is
// the asked size of the request's own text; the result keeps it as
// Tokens, so sizes read off the workload stay the asked ones. It returns
// the sized source, the mean count it was last measured at and how many
// probes it sent.
func refine(probe prober, fit workload.Synthetic, own, want, got int, slope float64) (workload.Synthetic, float64, int) {
	at := func(words, pad int) workload.Synthetic {
		s := fit
		s.Tokens, s.WordsPerToken, s.Pad = own, float64(words)/float64(max(own, 1)), pad
		return s
	}
	sent := 0
	count := func(s workload.Synthetic, k int) (int, bool) {
		sent++
		return probe(s, k)
	}
	w := search(count, at, max(int(float64(fit.Tokens)*fit.WordsPerToken+0.5), 1), want, got, slope)
	mean := func(words, first int) (float64, bool) {
		sum, n := float64(first), 1
		for n < meanOf {
			c, ok := count(at(words, 0), 0)
			if !ok {
				return 0, false
			}
			sum, n = sum+float64(c), n+1
		}
		return sum / float64(n), true
	}
	first, ok := count(at(w, 0), 0)
	if !ok {
		return at(w, 0), float64(got), sent
	}
	m, ok := mean(w, first)
	if !ok {
		return at(w, 0), float64(first), sent
	}
	if short := want - int(math.Round(m)); short < 0 && w > 1 {
		// Too long on average: a word or more fewer, then pad.
		w = max(w-int(math.Ceil(float64(-short)/slope)), 1)
		if first, ok = count(at(w, 0), 0); ok {
			if m2, ok := mean(w, first); ok {
				m = m2
			}
		}
	}
	short := want - int(math.Round(m))
	if short <= 0 || short > 16 {
		return at(w, 0), m, sent
	}
	// What a pad word costs: one prompt probed with and without one.
	k := 1000 + sent
	plain, ok1 := count(at(w, 0), k)
	padded, ok2 := count(at(w, 1), k)
	if cost := padded - plain; ok1 && ok2 && cost >= 1 {
		if pads := int(math.Round(float64(short) / float64(cost))); pads > 0 {
			return at(w, pads), m + float64(pads*cost), sent
		}
	}
	return at(w, 0), m, sent
}

// search returns the word count, from w (whose prompt counted got), whose
// prompt's count is nearest want: steps of the slope until want is
// bracketed, then halving, within maxSearch probes.
func search(count prober, at func(words, pad int) workload.Synthetic, w, want, got int, slope float64) int {
	type point struct{ words, count int }
	best, cur := point{w, got}, point{w, got}
	lo, hi := point{-1, 0}, point{-1, 0}
	for probes := 0; probes < maxSearch && cur.count != want; probes++ {
		if cur.count < want {
			lo = cur
		} else {
			hi = cur
		}
		var next int
		if lo.words >= 0 && hi.words >= 0 {
			if hi.words-lo.words <= 1 {
				break
			}
			next = (lo.words + hi.words) / 2
		} else {
			step := int(math.Round(float64(want-cur.count) / slope))
			if step == 0 {
				step = 1
				if want < cur.count {
					step = -1
				}
			}
			if next = max(cur.words+step, 1); next == cur.words {
				break
			}
		}
		n, ok := count(at(next, 0), 0)
		if !ok {
			break
		}
		cur = point{next, n}
		if abs(cur.count-want) < abs(best.count-want) {
			best = cur
		}
	}
	return best.words
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
