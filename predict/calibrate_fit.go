package predict

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/model"
	"gonum.org/v1/gonum/mat"
)

// The search's moves: replays of the levels with a tuning, their
// residuals, the parameters' confidence and the tuned models file.

// full is every tunable's value with the searched ones set from x.
func (c *calibration) full(x []float64) []float64 {
	v := slices.Clone(c.start)
	for k, i := range c.free {
		v[i] = x[k]
	}
	return v
}

// replayAll replays the levels with the tuning v, in parallel; a level
// that fails is nil.
func (c *calibration) replayAll(v []float64, levels []int) map[int]*results.Run {
	models := c.tuned(v)
	runs := make(map[int]*results.Run, len(levels))
	par := c.o.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, par)
	for _, i := range levels {
		rp := c.levels[i]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r, err := rp.Run(c.ctx, models)
			if err != nil {
				r = nil
			}
			mu.Lock()
			runs[i] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	return runs
}

// residuals are the log errors of every measured figure of the levels
// replayed with the tuning v, in a fixed order.
func (c *calibration) residuals(v []float64, levels []int) []float64 {
	if len(c.passes) > 0 {
		var r []float64
		for _, pc := range c.passes {
			pc.slots = c.slots
			r = append(r, pc.residuals(v, levels)...)
		}
		return r
	}
	runs := c.replayAll(v, levels)
	var r []float64
	for _, i := range levels {
		for _, m := range results.CalibrationMetrics {
			want, ok := c.want(i, m.Name, m.Value)
			if !ok || want <= 0 {
				continue
			}
			got, ok := 0.0, false
			if runs[i] != nil {
				got, ok = m.Value(runs[i])
			}
			if !ok || got <= 0 {
				r = append(r, missingPenalty)
				continue
			}
			r = append(r, math.Log(got/want))
		}
	}
	return r
}

func sumSquares(r []float64) float64 {
	s := 0.0
	for _, x := range r {
		s += x * x
	}
	return s
}

// confidence estimates each searched parameter's standard error from the
// Jacobian J of the log residuals at v (central differences of a few
// percent, wide enough to step over the scheduler's discrete batching):
// cov = σ²·(JᵀJ)⁻¹ with σ² the residuals' variance, floored at noiseFloor².
func (c *calibration) confidence(v []float64) []results.FittedParam {
	params := make([]results.FittedParam, len(Tunables))
	for i, t := range Tunables {
		params[i] = results.FittedParam{Name: t.Name, Unit: t.Unit, Start: c.start[i], Value: v[i], Fixed: !slices.Contains(c.free, i)}
	}
	r0 := c.residuals(v, c.train)
	m, p := len(r0), len(c.free)
	if m <= p {
		return params
	}
	jac := mat.NewDense(m, p, nil)
	for k, i := range c.free {
		t := Tunables[i]
		h := math.Max(0.05*v[i], 1e-3*(t.Max-t.Min))
		lo, hi := slices.Clone(v), slices.Clone(v)
		lo[i], hi[i] = math.Max(v[i]-h, t.Min), math.Min(v[i]+h, t.Max)
		rl, rh := c.residuals(lo, c.train), c.residuals(hi, c.train)
		for row := range m {
			jac.Set(row, k, (rh[row]-rl[row])/(hi[i]-lo[i]))
		}
	}
	var jtj mat.SymDense
	jtj.SymOuterK(1, jac.T())
	var chol mat.Cholesky
	if !chol.Factorize(&jtj) {
		return params
	}
	var cov mat.SymDense
	if err := chol.InverseTo(&cov); err != nil {
		return params
	}
	s2 := math.Max(sumSquares(r0)/float64(m-p), noiseFloor*noiseFloor)
	for k, i := range c.free {
		se := math.Sqrt(s2 * cov.At(k, k))
		if math.IsNaN(se) || math.IsInf(se, 0) {
			continue
		}
		params[i].StdErr = se
		params[i].Determined = se < 0.5*math.Abs(v[i])
	}
	return params
}

// tuningOf reads a model's tuning in the order of Tunables.
func tuningOf(m *model.ModelSpec) []float64 {
	v := []float64{1, 1, 0, 0}
	if e := m.Efficiency; e != nil {
		v[0], v[1] = e.Compute, e.Memory
	}
	if l := m.Latency; l != nil {
		v[2], v[3] = l.StepOverheadMs, l.PerSequenceOverheadMs
	}
	return v
}

// tuned is the target's models file with the tuning v and the chosen
// slot count.
func (c *calibration) tuned(v []float64) *model.ModelsFile {
	f := tunedModels(c.o.Target.Models, c.spec.Name, v)
	if c.slots > 0 {
		for i := range f.Models {
			m := &f.Models[i]
			if m.Name == c.spec.Name {
				s := model.SchedulerSpec{}
				if m.Scheduler != nil {
					s = *m.Scheduler
				}
				s.MaxNumSeqs = c.slots
				m.Scheduler = &s
			}
		}
	}
	return f
}

// chooseSlots picks the slot count whose replays at the starting tuning
// err least, among the powers of two up to the starting model's, and
// records the choice as a parameter of the fit.
func (c *calibration) chooseSlots(out *results.Calibration) error {
	most := 1024
	if s := c.spec.Scheduler; s != nil && s.MaxNumSeqs > 0 {
		most = s.MaxNumSeqs
	}
	best, bestLoss := most, math.Inf(1)
	for k := 1; k <= most; k *= 2 {
		c.slots = k
		l := sumSquares(c.residuals(c.start, c.train))
		if err := c.ctx.Err(); err != nil {
			return err
		}
		if l < bestLoss {
			best, bestLoss = k, l
		}
	}
	c.slots = best
	out.Notes = append(out.Notes, fmt.Sprintf("max_num_seqs %d (of %d) chosen by the replay error at the starting tuning among the powers of two", best, most))
	return nil
}

// tunedModels is a copy of f whose model name has the tuning v.
func tunedModels(f *model.ModelsFile, name string, v []float64) *model.ModelsFile {
	g := *f
	g.Models = slices.Clone(f.Models)
	for i := range g.Models {
		m := &g.Models[i]
		if m.Name != name {
			continue
		}
		m.Efficiency = &model.EfficiencySpec{Compute: v[0], Memory: v[1]}
		lat := model.LatencySpec{}
		if m.Latency != nil {
			lat = *m.Latency
		}
		lat.StepOverheadMs, lat.PerSequenceOverheadMs = v[2], v[3]
		m.Latency = &lat
	}
	return &g
}

// roundParams keeps four significant digits: the fit is not better than
// that, and the models file stays readable.
func roundParams(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		if v == 0 {
			continue
		}
		scale := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
		out[i] = math.Round(v*scale) / scale
	}
	return out
}

func tunableNames() string {
	var n []string
	for _, t := range Tunables {
		n = append(n, t.Name)
	}
	return strings.Join(n, ", ")
}

func skippedReasons(levels []results.CalibratedLevel) string {
	var r []string
	for _, l := range levels {
		if l.Skipped != "" {
			r = append(r, fmt.Sprintf("load %g: %s", l.Load, l.Skipped))
		}
	}
	return strings.Join(r, "; ")
}
