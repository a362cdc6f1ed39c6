package workload

import (
	"math"
	"testing"
	"time"
)

// cumulative is a ramp's expected arrivals by t s into it, written from
// its rate r(t) independently of inverse.
func cumulative(r Ramp, rate, t float64) float64 {
	d, r0 := r.Duration.Seconds(), r.StartRate(rate)
	if r.Exponential {
		g := rate / r0
		return r0 * d / math.Log(g) * (math.Pow(g, t/d) - 1)
	}
	return r0*t + (rate-r0)*t*t/(2*d)
}

// TestRampInverse holds that the warp lands each offset where the ramp's
// cumulative rate reaches the level's: Λ(inverse(τ)) = rate·τ.
func TestRampInverse(t *testing.T) {
	t.Parallel()
	for _, r := range []Ramp{
		{Duration: 10 * time.Second, From: -1},
		{Duration: 10 * time.Second, From: 2},
		{Duration: 10 * time.Second, From: 12}, // a ramp down
		{Duration: 30 * time.Second, From: -1, Exponential: true},
		{Duration: 30 * time.Second, From: 1, Exponential: true},
	} {
		inv := r.inverse(8)
		for _, t0 := range []float64{0.5, 3, 7, 9.99} {
			want := cumulative(r, 8, t0)
			if got := cumulative(r, 8, inv(want/8)); math.Abs(got-want) > 1e-9*want {
				t.Errorf("%s from %v: Λ(inverse) = %v, want %v", r.Strategy(), r.From, got, want)
			}
		}
	}
}

// TestRampArrivals holds the ramp's arrivals to its rate: over many
// seeds the mean count in the ramp is 1 + Λ(D) and in its first half
// 1 + Λ(D/2) (the schedule's first arrival is at zero; a linear ramp from
// 0 offers a quarter of the rest there), within four standard errors of
// Poisson counts.
func TestRampArrivals(t *testing.T) {
	t.Parallel()
	const rate, seeds = 20.0, 400
	for _, r := range []Ramp{{Duration: 10 * time.Second, From: -1}, {Duration: 10 * time.Second, From: -1, Exponential: true}} {
		var all, firstHalf float64
		for seed := range uint64(seeds) {
			a, err := NewRampArrivals(r, rate, 1, seed)
			if err != nil {
				t.Fatal(err)
			}
			p := a.Phase(0, r.Duration)
			for {
				off, ok := p.Next()
				if !ok {
					break
				}
				all++
				if off < r.Duration/2 {
					firstHalf++
				}
			}
		}
		for _, c := range []struct {
			what      string
			got, want float64
		}{{"the whole ramp", all / seeds, 1 + r.Expected(rate)}, {"its first half", firstHalf / seeds, 1 + cumulative(r, rate, r.Duration.Seconds()/2)}} {
			if se := math.Sqrt(c.want / seeds); math.Abs(c.got-c.want) > 4*se {
				t.Errorf("%s ramp, %s: %.2f arrivals on average, want %.2f ± %.2f", r.Strategy(), c.what, c.got, c.want, 4*se)
			}
		}
	}
	if got := (Ramp{Duration: 10 * time.Second, From: -1}).Expected(rate); got != 100 {
		t.Errorf("a linear ramp from 0 to 20/s over 10 s offers %v arrivals, want 100", got)
	}
}

// TestRampRefused names what a ramp cannot be.
func TestRampRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r    Ramp
		rate float64
	}{
		{Ramp{Duration: time.Second, From: 0, Exponential: true}, 5},
		{Ramp{Duration: time.Second, From: math.NaN()}, 5},
		{Ramp{Duration: time.Second, From: -1}, 0},
	} {
		if _, err := NewRampArrivals(c.r, c.rate, 1, 1); err == nil {
			t.Errorf("ramp %+v into %v/s accepted", c.r, c.rate)
		}
	}
}
