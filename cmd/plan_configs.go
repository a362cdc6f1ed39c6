package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/kneebench/knee/predict"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/simulator"
)

// candidates are the configurations to search: the fitted models file's,
// or every GPU, model and tensor-parallel size given.
func (o *planOptions) candidates(ctx context.Context) ([]*predict.Candidate, error) {
	responder, err := simulator.LoadResponses(ctx, o.sim.responses)
	if err != nil {
		return nil, withCode(ExitRuntime, fmt.Errorf("--sim-responses: %w", err))
	}
	spec := predict.CandidateSpec{GPUs: o.gpus, Models: o.models, TPs: o.tps, FindMax: o.findMax, CalibratedName: o.calibrated,
		Responder: responder, Chat: o.target.Endpoint.Chat()}
	if o.calibrated != "" {
		if spec.Calibrated, err = simulator.LoadModels(ctx, o.calibrated); err != nil {
			return nil, withCode(ExitRuntime, fmt.Errorf("--calibrated: %w", err))
		}
	}
	cands, err := spec.Candidates()
	if err != nil {
		return nil, usageErr("%w", err)
	}
	return cands, nil
}

// priceTable is --prices, or the example prices, and whose they are.
func (o *planOptions) priceTable(ctx context.Context) (map[string]float64, string, error) {
	prices, source, err := predict.PriceTable(ctx, o.prices)
	switch {
	case errors.As(err, new(*predict.PricesReadError)):
		return nil, "", withCode(ExitRuntime, err)
	case err != nil:
		return nil, "", usageErr("%w", err)
	}
	return prices, source, nil
}

// outputs names the plan's files in --out-dir and checks them.
func (o *planOptions) outputs() (string, report.SweepFiles, error) {
	f := &sweepFlags{label: o.label, outDir: o.outDir, load: o.load}
	return f.sweepOutputs("plan", nil)
}

// num writes a load in its shortest form.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
