package sched

import (
	"math"
	"math/rand/v2"
)

// Real step times vary from step to step (kernel launches, the Python
// scheduler, collectives): a step of the same batch is not the same
// length twice. Without it a simulator keeps requests that collided once
// in lock-step for ever. Config.StepTimeCV draws each step's duration
// from a log-normal of mean the cost model's time and that coefficient of
// variation, from a stream seeded per replica, so a prediction repeats
// exactly for a seed.

// jitter scales step times; nil when the configuration asks for none.
type jitter struct {
	rng       *rand.Rand
	mu, sigma float64
}

func newJitter(cv float64, seed, replica uint64) *jitter {
	if !(cv > 0) {
		return nil
	}
	s2 := math.Log1p(cv * cv)
	return &jitter{rng: rand.New(rand.NewPCG(seed, replica^0x6a09e667f3bcc909)), mu: -s2 / 2, sigma: math.Sqrt(s2)}
}

// scale is the next step's factor on its cost-model duration; 1 for nil.
func (j *jitter) scale() float64 {
	if j == nil {
		return 1
	}
	return math.Exp(j.mu + j.sigma*j.rng.NormFloat64())
}

// NewReplica returns a core for cfg that is replica (0 up) of a fleet
// whose step-time draws are seeded by seed; New's draws are replica 0's
// of seed 0.
func NewReplica(cfg Config, seed, replica uint64) *Core {
	c := New(cfg)
	c.jitter = newJitter(cfg.StepTimeCV, seed, replica)
	return c
}
