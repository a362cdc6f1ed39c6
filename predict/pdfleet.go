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
}

func newPDFleet(cfg sched.DisaggConfig) *pdFleet { return &pdFleet{d: sched.NewDisagg(cfg)} }

func (p *pdFleet) add(r sched.Request, key uint64) { p.d.Add(r, key) }

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
	return out
}
