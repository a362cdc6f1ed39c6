package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kneebench/knee/predict"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator"
	"github.com/kneebench/knee/simulator/server"
)

// candidates are the configurations to search: the fitted models file's,
// or every GPU, model and tensor-parallel size given.
func (o *planOptions) candidates(ctx context.Context) ([]*predict.Candidate, error) {
	responder, err := simulator.LoadResponses(ctx, o.sim.responses)
	if err != nil {
		return nil, withCode(ExitRuntime, fmt.Errorf("--sim-responses: %w", err))
	}
	spec := predict.CandidateSpec{GPUs: o.gpus, Models: o.models, TPs: o.tps, FindMax: o.findMax, CalibratedName: o.calibrated,
		Responder: responder, Endpoint: o.target.Endpoint}
	if err := o.behaviour(&spec); err != nil {
		return nil, err
	}
	if o.calibrated != "" {
		if spec.Calibrated, err = simulator.LoadModels(ctx, o.calibrated); err != nil {
			return nil, withCode(ExitRuntime, fmt.Errorf("--calibrated: %w", err))
		}
	}
	cands, err := spec.Candidates()
	if err != nil {
		return nil, usageErr("%w", err)
	}
	if o.calibratedOnly {
		kept := cands[:0]
		for _, c := range cands {
			if c.Calibration != results.CalibrationApriori {
				kept = append(kept, c)
			}
		}
		if len(kept) == 0 {
			return nil, usageErr("--calibrated-only: every GPU given has only a priori figures (see knee presets for the fitted families)")
		}
		cands = kept
	}
	for _, c := range cands {
		if err := shapeRequests(ctx, &c.Target, &o.target.TargetSpec); err != nil {
			return nil, err
		}
	}
	return cands, nil
}

// behaviour reads --vision, --reasoning-tokens and --tool-calls into
// the candidates' models.
func (o *planOptions) behaviour(spec *predict.CandidateSpec) error {
	if o.vision != "" {
		v := &server.VisionSpec{Family: o.vision}
		if err := v.Validate(); err != nil {
			return usageErr("--vision: %w", err)
		}
		spec.Vision = v
	}
	for _, e := range predict.SplitList(cmp.Or(o.schedulesAs, server.SchedulesVLLM)) {
		if why := server.RulesProblem(e, o.policy, o.longPrefill, server.FlagWords); why != "" {
			return usageErr("%s", why)
		}
	}
	spec.SchedulesAs = o.schedulesAs
	switch o.policy {
	case "", "fcfs", "priority", "lpm":
		spec.Policy = o.policy
	default:
		return usageErr("--scheduling-policy %q: fcfs, priority or (SGLang's) lpm", o.policy)
	}
	if o.longPrefill < 0 || o.longPrefill > 1<<24 {
		return usageErr("--long-prefill-token-threshold %d: 0 (off) or a token count", o.longPrefill)
	}
	spec.LongPrefill, spec.GEMMTiles = o.longPrefill, o.gemmTiles
	if o.loras != "" {
		l := &server.LoRASpec{Adapters: predict.SplitList(o.loras), MaxLoRAs: o.maxLoRAs}
		if err := l.Validate(); err != nil {
			return usageErr("--lora-adapters: %w", err)
		}
		spec.LoRA = l
	}
	if n := o.reasoningTokens; n != 0 {
		r := &server.ReasoningSpec{Tokens: n, ReportTokens: true}
		if err := r.Validate(); err != nil {
			return usageErr("--reasoning-tokens %d: %w", n, err)
		}
		spec.Reasoning = r
	}
	if o.toolCalls == "" {
		return nil
	}
	share, tokens, ok := strings.Cut(o.toolCalls, ":")
	t := &server.ToolSpec{}
	var err1, err2 error
	t.Share, err1 = strconv.ParseFloat(share, 64)
	t.ArgumentTokens, err2 = strconv.Atoi(tokens)
	if !ok || err1 != nil || err2 != nil {
		return usageErr("--tool-calls %q must look like SHARE:TOKENS, e.g. 0.5:24", o.toolCalls)
	}
	if err := t.Validate(); err != nil {
		return usageErr("--tool-calls %s: %w", o.toolCalls, err)
	}
	if o.target.Tools == "" {
		return usageErr("--tool-calls needs --tools: a model calls only the tools a request offers")
	}
	spec.Tools = t
	return nil
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
	label, files, err := f.sweepOutputs("plan", nil)
	if err != nil || o.day.trace == "" {
		return label, files, err
	}
	outputs := files.Outputs()
	outputs["the day's minutes"] = o.dayPath(files)
	return label, files, checkIO(outputs, map[string]string{"--trace": o.day.trace})
}

// dayPath is the day's minutes' CSV, beside the plan's.
func (o *planOptions) dayPath(files report.SweepFiles) string {
	return strings.TrimSuffix(files.CSV, ".csv") + "-day.csv"
}

// num writes a load in its shortest form.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
