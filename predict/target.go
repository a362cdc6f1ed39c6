package predict

import (
	"context"
	"fmt"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/model"
	"github.com/kneebench/knee/simulator/sched"
	"github.com/kneebench/knee/workload/kind"
)

// TargetSpec is the simulated server as the --sim flags give it: a
// preset (GPU[xN]/MODEL[@DTYPE]) or a models file, the responses file, the
// model (the file's first when empty) and the endpoint.
type TargetSpec struct {
	Preset, Models, Responses, Model string
	// GEMMTiles gives the preset's GPU its fitted kernel table
	// (model's ShapeProducts); the origin says so.
	GEMMTiles bool
	// Endpoint is the kind of request sent. A pooling kind's (embeddings,
	// rerank) model without a pooling spec serves as an encoder of its
	// architecture, with DefaultPoolingDimension; a pooling model refuses
	// to generate.
	Endpoint kind.Name
}

// DefaultPoolingDimension is the vectors' size of a model made a pooling
// one for an embeddings prediction: the size does not change the cost,
// only the answers' length.
const DefaultPoolingDimension = 1024

// Load builds the target and returns what its models came from;
// cancelling ctx ends a wait on a FIFO. A bad
// preset or model is a *model.UsageError.
func (s TargetSpec) Load(ctx context.Context) (Target, string, error) {
	var models *model.ModelsFile
	var err error
	origin := s.Models
	if s.Preset != "" {
		origin = s.Preset
		if models, err = model.ModelsOfPreset(s.Preset); err != nil {
			return Target{}, "", &model.UsageError{Err: fmt.Errorf("--sim-preset: %w", err)}
		}
	} else if models, err = model.LoadModels(ctx, s.Models); err != nil {
		return Target{}, "", fmt.Errorf("--sim-models: %w", err)
	}
	if s.GEMMTiles {
		if err := shapePreset(s, models); err != nil {
			return Target{}, "", err
		}
		origin += gemmSuffix
	}
	responder, err := model.LoadResponses(ctx, s.Responses)
	if err != nil {
		return Target{}, "", err
	}
	t := Target{Models: models, Model: s.Model, Responder: responder, Endpoint: s.Endpoint}
	pooled := s.Endpoint.Kind().Pooled()
	if t.Model == "" {
		t.Model = models.Models[0].Name
	}
	for i := range models.Models {
		m := &models.Models[i]
		switch {
		case m.Name != t.Model:
		case pooled && m.Pooling == nil:
			m.Pooling = &model.PoolingSpec{Dimension: DefaultPoolingDimension}
		case !pooled && m.Pooling != nil:
			return Target{}, "", &model.UsageError{Err: fmt.Errorf("model %s is a pooling model (pooling: in the models file): predict it with --endpoint %s", m.Name, kind.Where(kind.Kind.Pooled))}
		}
	}
	if _, _, err := t.Config(); err != nil {
		return Target{}, "", &model.UsageError{Err: err}
	}
	return t, origin, nil
}

// Prediction is what a sweep predicted on the target says it was computed
// on: the model, the preset (when one), the whole models file (from
// origin), the fleet, and how the model's tuning fitted.
func (t Target) Prediction(origin, preset string, replicas int, routing Routing) (*results.Prediction, error) {
	yml, err := t.Models.YAML(origin)
	if err != nil {
		return nil, err
	}
	p := &results.Prediction{Model: t.Model, Preset: preset, ModelsYAML: string(yml), Fit: t.FitNote(), MaxModelLen: t.StartLimit()}
	if cfg, _, err := t.Config(); err == nil {
		p.Scheduling = SchedulingText(cfg)
	}
	if replicas > 1 {
		p.Replicas, p.Routing = replicas, string(routing)
	}
	return p, nil
}

// SchedulingText says what engine rules a configuration schedules by
// (model.Engines): its queue's order, its step budget and what the
// engine's rules do.
func SchedulingText(cfg sched.Config) string {
	order := "first come, first served"
	switch cfg.Policy {
	case sched.PolicyPriority:
		order = "by priority"
	case sched.PolicyLPM:
		order = "longest cached prefix first"
	}
	switch {
	case cfg.Rules == model.SchedulesTRTLLM:
		return fmt.Sprintf("TensorRT-LLM scheduling: %s, guaranteed no evict (a request starts only when its whole answer's KV fits beside the running requests' reservations; none is paused), chunked context off (a prompt in one step of at most %d tokens), context and generation in one step, at most %d requests",
			order, cfg.MaxNumBatchedTokens, cfg.MaxNumSeqs)
	case cfg.Rules == model.SchedulesVLLMV0 && cfg.WholePrompts:
		return fmt.Sprintf("vLLM V0 scheduling: %s, prompts first and whole (no chunked prefill: a step that prefills runs no decode), steps of %d tokens and %d sequences, a %g%% watermark of free blocks at admission",
			order, cfg.MaxNumBatchedTokens, cfg.MaxNumSeqs, 100*cfg.Watermark)
	case cfg.Rules == model.SchedulesVLLMV0:
		return fmt.Sprintf("vLLM V0 scheduling at a context over 32k: %s, chunked prefill mixed with decodes in steps of %d tokens and %d sequences, a %g%% watermark of free blocks at admission",
			order, cfg.MaxNumBatchedTokens, cfg.MaxNumSeqs, 100*cfg.Watermark)
	}
	if cfg.PrefillFirst {
		return fmt.Sprintf("SGLang scheduling: %s, a step prefills or decodes, never both (mixed chunk off: the running requests' decodes wait out every prefill step), prompt chunks of %d tokens, at most %d running requests",
			order, cfg.MaxNumBatchedTokens, cfg.MaxNumSeqs)
	}
	long := "off: a long prompt's chunk takes a step's whole budget, and a short request queued behind it waits for the whole prompt"
	if t := cfg.LongPrefillThreshold; t > 0 {
		long = fmt.Sprintf("%d: a long prompt takes at most %d tokens of a step, leaving the rest to the requests behind it", t, t)
	}
	return fmt.Sprintf("vLLM V1 scheduling: %s, chunked prefill mixed with decodes in steps of %d tokens and %d sequences, long_prefill_token_threshold %s",
		order, cfg.MaxNumBatchedTokens, cfg.MaxNumSeqs, long)
}
