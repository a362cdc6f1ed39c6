package predict

import (
	"math"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/engine"
	"github.com/kneebench/knee/simulator/sched"
)

// pdFleet is a disaggregated model as the driver's clock runs it: the
// simulator's own core of one (sched.Disagg), its prefill pool, links
// and decode pool stepped through their events in virtual time.
type pdFleet struct {
	d *sched.Disagg
	// kept is the phases of the measured requests ended.
	kept []sched.Phases
	// What each part did over the level: busy seconds of the prefill and
	// decode pools, decode steps and those a full KV cache held back,
	// KV bytes shipped, and the level's first arrival and latest event.
	prefillBusy, decodeBusy float64
	decodeSteps, kvFull     int
	bytes                   float64
	first, last             float64
	started                 bool
	// energy, when set, meters every step of both pools.
	energy *energyMeter
}

func newPDFleet(cfg sched.DisaggConfig) *pdFleet {
	p := &pdFleet{d: sched.NewDisagg(cfg)}
	p.d.OnStep = p.step
	return p
}

// step books what a step of either pool did.
func (p *pdFleet) step(role sched.Role, _ int, st *sched.Step) {
	p.last = max(p.last, st.End)
	if p.energy != nil {
		p.energy.step(st)
	}
	if role == sched.RolePrefill {
		p.prefillBusy += st.Duration
		costs := p.d.Config().Prefill.Costs
		for _, q := range st.Finished {
			p.bytes += costs.KVBytes(q.PromptLen)
		}
		return
	}
	p.decodeBusy += st.Duration
	p.decodeSteps++
	if st.StopReason == sched.StopKVFull || len(st.Preempted) > 0 {
		p.kvFull++
	}
}

func (p *pdFleet) add(r sched.Request, key uint64) {
	if !p.started {
		p.first, p.started = r.Arrival, true
	}
	p.d.Add(r, key)
}

func (p *pdFleet) ended(id int64, measured bool) {
	if ph, ok := p.d.Phases(id); ok && measured {
		p.kept = append(p.kept, ph)
	}
	p.d.Done(id)
}

func (p *pdFleet) abort(id int64, now time.Duration) { p.d.Abort(id, now.Seconds()) }

// fits refuses what either pool could never hold, in the words the
// server uses (engine.CheckFitsLen), naming the pool.
func (p *pdFleet) fits(prompt, output int) error {
	if err := engine.CheckFitsLen(p.d.Core(sched.RolePrefill, 0), prompt, 1); err != nil {
		return err
	}
	return engine.CheckFitsLen(p.d.Core(sched.RoleDecode, 0), prompt, output)
}

func (p *pdFleet) blockSize() int { return p.d.Config().Decode.BlockSize }

func (p *pdFleet) routesByPrefix() bool { return p.d.Config().Routing == PrefixAffinity }

func (p *pdFleet) start(now time.Duration) { p.d.Start(now.Seconds()) }

func (p *pdFleet) nextEnd() time.Duration {
	t := p.d.NextEvent()
	if math.IsInf(t, 1) {
		return driver.Never
	}
	return at(t)
}

func (p *pdFleet) finish(now time.Duration, complete func(*sched.Step)) {
	for t := p.d.NextEvent(); !math.IsInf(t, 1) && at(t) <= now; t = p.d.NextEvent() {
		p.d.Advance(complete)
	}
}

// phases is the measured requests' TTFT by phase, in milliseconds.
func (p *pdFleet) phases() *results.Phases {
	cfg := p.d.Config()
	out := &results.Phases{Source: "simulated", PrefillReplicas: cfg.PrefillReplicas, DecodeReplicas: cfg.DecodeReplicas, LinkGbps: cfg.LinkGbps}
	cols := make([][]float64, 5)
	for _, ph := range p.kept {
		for i, v := range []float64{ph.PrefillQueue(), ph.Prefill(), ph.Transfer(), ph.DecodeQueue(), ph.FirstStep()} {
			cols[i] = append(cols[i], 1000*v)
		}
	}
	out.Set(cols)
	if span := p.last - p.first; span > 0 {
		out.Busy = &results.PhaseBusy{Prefill: p.prefillBusy / (span * float64(cfg.PrefillReplicas)),
			Decode: p.decodeBusy / (span * float64(cfg.DecodeReplicas)),
			Link:   p.bytes / (cfg.LinkGbps * 1e9 / 8 * span * float64(cfg.DecodeReplicas))}
		if p.decodeSteps > 0 {
			out.Busy.DecodeKVFull = float64(p.kvFull) / float64(p.decodeSteps)
		}
	}
	return out
}
