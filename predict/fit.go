package predict

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/optimize"
)

// Param is one free parameter of a fit, searched inside [Min, Max] from
// Start.
type Param struct {
	Name            string
	Start, Min, Max float64
}

// Fit minimises loss over params with gonum's Nelder–Mead simplex. Each
// parameter is kept strictly inside its bounds by a logistic transform, so
// the search is unconstrained and never asks the model for an efficiency
// above 1 or a negative overhead. A simplex that has shrunk onto a ridge
// (two parameters trading off, as memory efficiency and step overhead do)
// crawls, so each round has a budget of 50 evaluations per vertex and the
// search restarts with a fresh simplex from the best point until a restart
// no longer improves it. It stops after maxEval calls of loss in all.
func Fit(params []Param, maxEval int, loss func(x []float64) float64) (FitResult, error) {
	if len(params) == 0 {
		return FitResult{}, errors.New("nothing to fit")
	}
	to := func(u []float64, x []float64) {
		for i, p := range params {
			x[i] = p.Min + (p.Max-p.Min)/(1+math.Exp(-u[i]))
		}
	}
	u := make([]float64, len(params))
	for i, p := range params {
		f := (p.Start - p.Min) / (p.Max - p.Min)
		f = math.Min(math.Max(f, 1e-3), 1-1e-3)
		u[i] = math.Log(f / (1 - f))
	}
	// The best point seen, whatever the optimiser reports when its budget
	// runs out mid-simplex.
	best := FitResult{Loss: math.Inf(1)}
	var bestU []float64
	evals := 0
	problem := optimize.Problem{Func: func(uu []float64) float64 {
		xs := make([]float64, len(params))
		to(uu, xs)
		l := loss(xs)
		evals++
		if l < best.Loss {
			best.Loss, best.X, bestU = l, xs, append(bestU[:0], uu...)
		}
		return l
	}}
	var err error
	for round := 0; evals < maxEval; round++ {
		before := best.Loss
		budget := min(maxEval-evals, 50*(len(params)+1))
		_, err = optimize.Minimize(problem, u, &optimize.Settings{FuncEvaluations: budget}, &optimize.NelderMead{SimplexSize: 0.3})
		if bestU == nil {
			break
		}
		u = append(u[:0], bestU...)
		// Stop when a restart gains nothing, or the fit is exact to far
		// below any measurement's noise.
		if round > 0 && before-best.Loss <= 1e-6*before || best.Loss < 1e-10 {
			break
		}
	}
	best.Evaluations = evals
	if best.X == nil {
		return FitResult{}, err
	}
	return best, nil
}

// FitResult is the outcome of Fit: the best parameters found, their loss
// and how many times the loss was computed.
type FitResult struct {
	X           []float64
	Loss        float64
	Evaluations int
}
