package predict

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/model"
)

// Tunable is one free parameter of the cost model that a calibration can
// fit, with the range searched.
type Tunable struct {
	Name, Unit string
	Min, Max   float64
}

// Tunables are the cost model's free parameters: the shares of peak
// compute and memory bandwidth reached, the fixed cost of a step and its
// cost per scheduled sequence.
var Tunables = []Tunable{
	{"compute_efficiency", "", 0.02, 1},
	{"memory_efficiency", "", 0.02, 1},
	{"step_overhead_ms", "ms", 0, 100},
	{"per_sequence_overhead_ms", "ms", 0, 5},
}

// noiseFloor is the smallest spread of the log residuals assumed when the
// confidence of a fit is computed: a measured level does not repeat better
// than about 1% from run to run, so a fit that reproduces its data exactly
// has not pinned its parameters down to nothing.
const noiseFloor = 0.01

// missingPenalty is the log residual of a figure the replay did not
// produce at all (every request refused, say): as if 150× off.
const missingPenalty = 5

// CalibrateOptions configures Calibrate.
type CalibrateOptions struct {
	// Measured is the measured sweep (a single run is a sweep of one
	// level), and Name what to call it.
	Measured *results.Sweep
	Name     string
	// Target is the simulated model the fit starts from (its tuning is
	// the start), and Origin what it came from.
	Target Target
	Origin string
	// Fixed names the tunables held at their start.
	Fixed []string
	// HoldOut lists the 0-based levels kept out of the fit; nil holds out
	// every third usable level from the second when there are at least
	// three, and NoHoldOut none.
	HoldOut   []int
	NoHoldOut bool
	// Parallel bounds the levels replayed at once; 0 means one per CPU.
	Parallel int
	// MaxEvaluations bounds the search's replays of the training levels.
	MaxEvaluations int
	// Tolerance is the mean absolute error in percent a good fit stays
	// within, on the fitted levels and the held-out ones (0: 15).
	Tolerance float64
	// Evaluated, when set, is told of each replay of the fitted levels:
	// how many so far, the most allowed, and that replay's error (the
	// root mean square of its log errors), for progress.
	Evaluated func(evals, maxEvals int, rms float64)
	// FitSlots also chooses the model's slot count (max_num_seqs, what a
	// server like llama.cpp's --parallel sets) among the powers of two up
	// to the starting model's, by the replay error at the starting tuning.
	FitSlots bool
}

// calibration is the state of one fit.
type calibration struct {
	ctx   context.Context
	o     CalibrateOptions
	spec  *model.ModelSpec
	start []float64 // every tunable
	free  []int     // indices of the searched tunables
	// slots, when above 0, is the model's max_num_seqs in every replay.
	slots  int
	levels []Replayed // per measured level; zero when skipped
	train  []int
	held   []int
	// passes are a repeated sweep's repeats, each its own calibration:
	// the residuals are then all of theirs (see buildPasses). A pass's
	// figures are its repeat's, by level and metric name.
	passes  []*calibration
	figures map[int]map[string]float64
}

// want is level i's measured figure of the metric called name: the
// repeat's own for a pass, else read by value from the level's run.
func (c *calibration) want(i int, name string, value func(*results.Run) (float64, bool)) (float64, bool) {
	if c.figures != nil {
		v, ok := c.figures[i][name]
		return v, ok
	}
	return value(c.o.Measured.Levels[i].Run)
}

// Calibrate fits the target's cost-model tuning to a measured sweep by
// replaying each level's workload in virtual time and minimising the
// squared log errors of the figures in results.CalibrationMetrics over
// the training levels (gonum's Nelder–Mead). It returns the fit, level by
// level with the start and the held-out error, and the models file with
// the fitted tuning.
//
// Cancelling ctx stops it with ctx's error: the replays under way end, and
// the search's remaining steps each return at once.
func Calibrate(ctx context.Context, o CalibrateOptions) (*results.Calibration, *model.ModelsFile, error) {
	c, err := newCalibration(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	out := &results.Calibration{Measured: o.Name, Model: c.spec.Name, Origin: o.Origin}
	for _, m := range results.CalibrationMetrics {
		out.Metrics = append(out.Metrics, m.Name)
	}
	usable := c.replayLevels(out)
	if len(usable) == 0 {
		return nil, nil, errors.New("no measured level can be replayed: " + skippedReasons(out.Levels))
	}
	c.split(usable)
	if len(c.held) == 0 {
		out.Notes = append(out.Notes, "no level was held out, so the errors below are on the fitted data only")
	}
	for _, i := range c.held {
		out.Levels[i].HeldOut = true
	}
	if c.buildPasses(usable); len(c.passes) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("fitted to each of the %d repeats at once, each against its own schedule's replay; "+
			"a level's figures below are the repeats' means", len(c.passes)))
	}
	if o.FitSlots {
		if err := c.chooseSlots(out); err != nil {
			return c.stopped(out, c.start), nil, err
		}
	}
	best, evaluations, err := c.search()
	if ctx.Err() != nil {
		return c.stopped(out, best), nil, ctx.Err()
	}
	if err != nil {
		return nil, nil, err
	}
	out.Evaluations = evaluations
	out.Params = c.confidence(best)
	if note := widen(out.Params, c.free, c.passFits()); note != "" {
		out.Notes = append(out.Notes, note)
	}
	c.compare(out, best, usable)
	if err := ctx.Err(); err != nil {
		return c.stopped(out, best), nil, err
	}
	out.Summarise()
	c.judge(out)
	models := c.tuned(best)
	for i := range models.Models {
		if models.Models[i].Name == c.spec.Name {
			models.Models[i].Fit = fitSpec(out)
		}
	}
	return out, models, nil
}

// newCalibration reads the target's model and which tunables are free.
func newCalibration(ctx context.Context, o CalibrateOptions) (*calibration, error) {
	spec, err := o.Target.model()
	if err != nil {
		return nil, err
	}
	c := &calibration{ctx: ctx, o: o, spec: spec, start: tuningOf(spec)}
	for i, t := range Tunables {
		if !slices.Contains(o.Fixed, t.Name) {
			c.free = append(c.free, i)
		}
	}
	for _, name := range o.Fixed {
		if !slices.ContainsFunc(Tunables, func(t Tunable) bool { return t.Name == name }) {
			return nil, fmt.Errorf("no tunable %q (there are %s)", name, tunableNames())
		}
	}
	if len(c.free) == 0 {
		return nil, errors.New("every tunable is fixed: nothing to fit")
	}
	return c, nil
}

// replayLevels replays each measured level's workload once, noting in out
// why a level cannot be, and returns the indices of those that can.
func (c *calibration) replayLevels(out *results.Calibration) []int {
	notes := map[string]bool{}
	var usable []int
	c.levels = make([]Replayed, len(c.o.Measured.Levels))
	for i, l := range c.o.Measured.Levels {
		lv := results.CalibratedLevel{Load: l.Load}
		if why := replayable(l); why != "" {
			lv.Skipped = why
		} else if rp, note, err := Replay(c.o.Target, l.Run, fmt.Sprintf("[calibrate.%d]", i+1)); err != nil {
			lv.Skipped = err.Error()
		} else {
			c.levels[i] = rp
			usable = append(usable, i)
			if note != "" && !notes[note] {
				notes[note] = true
				out.Notes = append(out.Notes, note)
			}
		}
		out.Levels = append(out.Levels, lv)
	}
	return usable
}

// search minimises the training levels' loss over the free tunables. It
// returns the best point (the start, or the best reached when stopped)
// and how many evaluations it took.
func (c *calibration) search() ([]float64, int, error) {
	o := c.o
	params := make([]Param, len(c.free))
	for k, i := range c.free {
		t := Tunables[i]
		params[k] = Param{Name: t.Name, Start: math.Min(math.Max(c.start[i], t.Min), t.Max), Min: t.Min, Max: t.Max}
	}
	maxEval := o.MaxEvaluations
	if maxEval <= 0 {
		maxEval = 600
	}
	bestLoss, bestX, evals := math.Inf(1), []float64(nil), 0
	fit, err := Fit(params, maxEval, func(x []float64) float64 {
		if c.ctx.Err() != nil {
			// Stopped: the search's remaining steps cost nothing.
			return math.Inf(1)
		}
		r := c.residuals(c.full(x), c.train)
		l := sumSquares(r)
		if c.ctx.Err() == nil && l < bestLoss {
			bestLoss, bestX = l, slices.Clone(x)
		}
		if evals++; o.Evaluated != nil && len(r) > 0 {
			o.Evaluated(evals, maxEval, math.Sqrt(l/float64(len(r))))
		}
		return l
	})
	if c.ctx.Err() != nil {
		if bestX != nil {
			return c.full(roundParams(bestX)), 0, nil
		}
		return c.start, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	return c.full(roundParams(fit.X)), fit.Evaluations, nil
}

// compare replays every usable level with the start and the fit, for the
// report: each level against its own schedule, or, for a repeated sweep,
// each repeat against its own, the figures then the repeats' means (as
// the fit was made).
func (c *calibration) compare(out *results.Calibration, best []float64, usable []int) {
	sources := []*calibration{c}
	if len(c.passes) > 0 {
		sources = c.passes
	}
	start, fit := make([]map[int]*results.Run, len(sources)), make([]map[int]*results.Run, len(sources))
	for k, src := range sources {
		src.slots = c.slots
		start[k], fit[k] = src.replayAll(c.start, usable), src.replayAll(best, usable)
	}
	for _, i := range usable {
		for _, m := range results.CalibrationMetrics {
			var mf results.MetricFit
			n := 0
			for k, src := range sources {
				want, ok := src.want(i, m.Name, m.Value)
				if !ok || want <= 0 {
					continue
				}
				n++
				mf.Measured += want
				mf.Start += valueOf(m.Value, start[k][i])
				mf.Fitted += valueOf(m.Value, fit[k][i])
			}
			if n == 0 {
				continue
			}
			mf.Metric, mf.Measured, mf.Start, mf.Fitted = m.Name, mf.Measured/float64(n), mf.Start/float64(n), mf.Fitted/float64(n)
			out.Levels[i].Metrics = append(out.Levels[i].Metrics, mf)
		}
	}
}

// valueOf is a replay's figure, 0 when the replay failed or has none.
func valueOf(value func(*results.Run) (float64, bool), r *results.Run) float64 {
	if r == nil {
		return 0
	}
	v, _ := value(r)
	return v
}

// stopped is the calibration as far as it went when it was stopped: the
// parameters at the best point reached, no level replayed with them.
func (c *calibration) stopped(out *results.Calibration, best []float64) *results.Calibration {
	out.Interrupted = true
	out.Params = make([]results.FittedParam, len(Tunables))
	for i, t := range Tunables {
		out.Params[i] = results.FittedParam{Name: t.Name, Unit: t.Unit, Start: c.start[i], Value: best[i], Fixed: !slices.Contains(c.free, i)}
	}
	return out
}

// split assigns the usable levels to training and held-out sets.
func (c *calibration) split(usable []int) {
	switch {
	case c.o.NoHoldOut:
	case c.o.HoldOut != nil:
		for _, i := range usable {
			if slices.Contains(c.o.HoldOut, i) {
				c.held = append(c.held, i)
			}
		}
	case len(usable) >= 3:
		for k := 1; k < len(usable); k += 3 {
			c.held = append(c.held, usable[k])
		}
	}
	for _, i := range usable {
		if !slices.Contains(c.held, i) {
			c.train = append(c.train, i)
		}
	}
	if len(c.train) == 0 { // every level held out: fit them all instead
		c.train, c.held = usable, nil
	}
}
