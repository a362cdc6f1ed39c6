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
// above 1 or a negative overhead. It returns the best parameters and
// their loss.
func Fit(params []Param, loss func(x []float64) float64) ([]float64, float64, error) {
	if len(params) == 0 {
		return nil, 0, errors.New("nothing to fit")
	}
	to := func(u []float64, x []float64) {
		for i, p := range params {
			x[i] = p.Min + (p.Max-p.Min)/(1+math.Exp(-u[i]))
		}
	}
	u0 := make([]float64, len(params))
	for i, p := range params {
		f := (p.Start - p.Min) / (p.Max - p.Min)
		f = math.Min(math.Max(f, 1e-3), 1-1e-3)
		u0[i] = math.Log(f / (1 - f))
	}
	x := make([]float64, len(params))
	problem := optimize.Problem{Func: func(u []float64) float64 {
		xs := make([]float64, len(params))
		to(u, xs)
		return loss(xs)
	}}
	res, err := optimize.Minimize(problem, u0, &optimize.Settings{FuncEvaluations: 4000}, &optimize.NelderMead{})
	if res == nil {
		return nil, 0, err
	}
	to(res.X, x)
	return x, res.F, nil
}
