package server

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kneebench/knee/simulator/sched"
	"github.com/valyala/fasthttp"
)

// powerMeter keeps one model's GPUs' energy as its steps run: each GPU
// draws sched.StepPowerW through a step and its idle draw between steps.
// Every GPU of a tensor-parallel model draws alike.
type powerMeter struct {
	idleW, maxW float64

	mu sync.Mutex
	// energyJ and busyS are one GPU's energy and time in steps up to at.
	energyJ, busyS float64
	at             time.Time
	// marks are (time, energy, busy) at step ends over the last seconds,
	// for the power and utilisation of the last second.
	marks []powerMark
}

type powerMark struct {
	at             time.Time
	energyJ, busyS float64
}

func newPowerMeter(idleW, maxW float64, now time.Time) *powerMeter {
	return &powerMeter{idleW: idleW, maxW: maxW, at: now, marks: []powerMark{{at: now}}}
}

// step books a step that ended at end.
func (p *powerMeter) step(st *sched.Step, end time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := end.Add(-time.Duration(st.Duration * float64(time.Second)))
	if start.After(p.at) {
		p.energyJ += p.idleW * start.Sub(p.at).Seconds()
	} else {
		start = p.at
	}
	if busy := end.Sub(start).Seconds(); busy > 0 {
		p.energyJ += sched.StepPowerW(p.idleW, p.maxW, st) * busy
		p.busyS += busy
	}
	if end.After(p.at) {
		p.at = end
	}
	p.marks = append(p.marks, powerMark{p.at, p.energyJ, p.busyS})
	// Keep one mark older than two seconds, for the last second's power.
	cut := 0
	for cut+1 < len(p.marks) && end.Sub(p.marks[cut+1].at) > 2*time.Second {
		cut++
	}
	p.marks = p.marks[cut:]
}

// read is one GPU's energy so far, and its power and utilisation over
// the last second, at now.
func (p *powerMeter) read(now time.Time) (energyJ, powerW, utilPct float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	idle := max(now.Sub(p.at).Seconds(), 0)
	energyJ = p.energyJ + p.idleW*idle
	// The state a second ago: the last mark at or before it (the meter
	// starts with one, and keeps one past two seconds), brought up to it
	// at the idle draw (a step that straddles it is counted after it).
	then := now.Add(-time.Second)
	m0 := p.marks[0]
	for _, m := range p.marks {
		if m.at.After(then) {
			break
		}
		m0 = m
	}
	e0, b0 := m0.energyJ, m0.busyS
	if gap := then.Sub(m0.at).Seconds(); gap > 0 {
		e0 += p.idleW * gap
	}
	if then.Before(m0.at) {
		// The meter is younger than a second: over its life.
		then = m0.at
	}
	span := now.Sub(then).Seconds()
	if span <= 0 {
		return energyJ, p.idleW, 0
	}
	powerW = (energyJ - e0) / span
	utilPct = min(max((p.busyS-b0)/span*100, 0), 100)
	return energyJ, powerW, utilPct
}

// gpuMetrics answers GET /gpu/metrics in the DCGM exporter's names and
// units, one series per GPU of every model whose hardware gives its power
// (idle_power_w and max_power_w; every preset does): a DCGM endpoint
// without a GPU, for knee's --gpu-metrics-url end to end.
func (s *Server) gpuMetrics(ctx *fasthttp.RequestCtx) {
	now := time.Now()
	var power, energy, util, fb strings.Builder
	n := 0
	for _, name := range s.order {
		m := s.models[name]
		if m.power == nil {
			continue
		}
		e, p, u := m.power.read(now)
		hw := s.opts.Models.Hardware[m.spec.Hardware]
		usedMiB := gpuMemoryUtilization(&m.spec) * hw.HBMGiB * 1024
		for i := range max(m.spec.TensorParallel, 1) {
			labels := fmt.Sprintf(`gpu="%d",UUID="GPU-knee-sim-%s-%d",device="nvidia%d",modelName="%s",Hostname="knee-sim"`, n, name, i, n, m.spec.Hardware)
			fmt.Fprintf(&power, "DCGM_FI_DEV_POWER_USAGE{%s} %.3f\n", labels, p)
			fmt.Fprintf(&energy, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{%s} %.0f\n", labels, e*1000)
			fmt.Fprintf(&util, "DCGM_FI_DEV_GPU_UTIL{%s} %.0f\n", labels, u)
			fmt.Fprintf(&fb, "DCGM_FI_DEV_FB_USED{%s} %.0f\n", labels, usedMiB)
			n++
		}
	}
	if n == 0 {
		writeError(ctx, &APIError{Status: 404, Type: "not_found_error", Code: "not_found",
			Message: "no GPU power figures: give a scheduler model's hardware idle_power_w and max_power_w (every preset has them)"})
		return
	}
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	fmt.Fprintf(ctx, "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n%s", power.String())
	fmt.Fprintf(ctx, "# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n%s", energy.String())
	fmt.Fprintf(ctx, "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %%).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n%s", util.String())
	fmt.Fprintf(ctx, "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\n%s", fb.String())
}
