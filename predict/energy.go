package predict

import (
	"context"
	"fmt"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/sched"
)

// energyMeter books the fleet's GPU energy as steps complete, on the
// same power model as knee sim's /gpu/metrics (sched.StepPowerW): each
// of a replica's GPUs draws the step's power through it and its idle
// draw between steps.
type energyMeter struct {
	idleW, maxW  float64
	gpus         int // per replica: the tensor-parallel size
	replicas     int
	hardware     string
	busyJ, busyS float64 // per GPU, summed over replicas
}

// energyMark is the meter at one instant of the simulated clock.
type energyMark struct {
	at, busyJ, busyS float64
}

// newEnergyMeter is the target's meter, nil when its hardware gives no
// power figures.
func newEnergyMeter(t Target, replicas int) *energyMeter {
	m, err := t.model()
	if err != nil {
		return nil
	}
	hw := t.Models.Hardware[m.Hardware]
	if hw.MaxPowerW <= 0 {
		return nil
	}
	return &energyMeter{idleW: hw.IdlePowerW, maxW: hw.MaxPowerW, gpus: max(m.TensorParallel, 1), replicas: max(replicas, 1), hardware: m.Hardware}
}

func (m *energyMeter) step(st *sched.Step) {
	m.busyJ += sched.StepPowerW(m.idleW, m.maxW, st) * st.Duration
	m.busyS += st.Duration
}

func (m *energyMeter) mark(at float64) energyMark { return energyMark{at, m.busyJ, m.busyS} }

// figures is the fleet's energy between two marks, as a DCGM scrape of
// the window would give it (steps counted when they end).
func (m *energyMeter) figures(a, b energyMark) *results.GPUFigures {
	span := b.at - a.at
	if span <= 0 {
		return nil
	}
	busyS := b.busyS - a.busyS
	perGPU := b.busyJ - a.busyJ + m.idleW*max(float64(m.replicas)*span-busyS, 0)
	n := m.gpus * m.replicas
	g := &results.GPUFigures{WindowS: span, EnergyJ: perGPU * float64(m.gpus)}
	g.PowerMeanW = g.EnergyJ / span
	for i := range n {
		// Replicas are not told apart: each GPU carries the mean share.
		e := g.EnergyJ / float64(n)
		g.GPUs = append(g.GPUs, results.GPUFigure{Endpoint: "predicted", GPU: fmt.Sprint(i), Model: m.hardware, EnergyJ: e,
			EnergySource: "predicted power model", PowerMeanW: e / span, UtilMeanPct: min(busyS/(float64(m.replicas)*span), 1) * 100})
	}
	g.Warnings = append(g.Warnings, "predicted: the power model's a priori draw between each GPU's idle and its limit (sched.StepPowerW), not a measurement")
	return g
}

// meterWindow meters the fleet's energy over the measured window: the
// window's hooks mark the meter at its start and once it drained, and
// energy then gives the window's figures (nil without power figures, or
// a window that never ended).
func (s *simServer) meterWindow(t Target, replicas int) (bench.Window, func() *results.GPUFigures) {
	pf, pd := s.fleet.(*pdFleet)
	if pd {
		// Both pools' replicas draw: every step of either is metered as
		// it ends (the client's tokens are the decode pool's alone).
		cfg := pf.d.Config()
		replicas = cfg.PrefillReplicas + cfg.DecodeReplicas
	}
	m := newEnergyMeter(t, replicas)
	if m == nil {
		return bench.Window{}, func() *results.GPUFigures { return nil }
	}
	if pd {
		pf.energy = m
	} else {
		s.energy = m
	}
	var a, b *energyMark
	win := bench.Window{
		OnWindowStart: func(context.Context) { k := m.mark(s.now.Seconds()); a = &k },
		OnWindowEnd:   func(context.Context) { k := m.mark(s.now.Seconds()); b = &k },
	}
	return win, func() *results.GPUFigures {
		if a == nil || b == nil {
			return nil
		}
		return m.figures(*a, *b)
	}
}
