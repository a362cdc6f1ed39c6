// Package predict runs a workload on the simulator's scheduler core in
// virtual time: the arrivals, prompts and answers a live run against
// knee sim would produce, with no sockets and no sleeping, summarised by
// the bench's own code into the same results.
//
// It is the one room that sees both sides: bench and workload for what is
// sent and how it is counted, the simulator's content, scheduler core and
// models file for what the server would say and when. Neither side imports
// it.
package predict

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/content"
	"github.com/kneebench/knee/simulator/model"
	"github.com/kneebench/knee/simulator/sched"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
	"github.com/kneebench/knee/workload/wire"
)

// Target is the simulated server: one scheduler model of a models file
// and the responses it answers with.
type Target struct {
	Models    *model.ModelsFile
	Model     string
	Responder *content.Responder
	// Chat selects the chat endpoint (messages and a chat template), else
	// completions.
	Chat bool
	// Effort and NoThinking are what every request asks of a reasoning
	// model's thinking (reasoning_effort; chat_template_kwargs'
	// enable_thinking=false); ToolChoice is every request's tool_choice.
	Effort     string
	NoThinking bool
	ToolChoice string
	// ToolList is the tools every request offers, put in each request
	// as a live run puts them (the server reads them into the prompt).
	ToolList []workload.Tool
	// ToolRounds and ToolResult answer a call's tool calls, as a live
	// run does (driver.Options).
	ToolRounds int
	ToolResult string
	// Endpoint is the kind of request sent (kind.Default when empty): a
	// pooling kind's requests have their inputs prefilled (a query with
	// each document when paired), one pooled result, no decode.
	Endpoint kind.Name
}

// kind is the kind of the requests sent to the target.
func (t Target) kind() kind.Kind { return t.Endpoint.Kind() }

// model returns the target's model spec.
func (t Target) model() (*model.ModelSpec, error) {
	var names []string
	for i := range t.Models.Models {
		m := &t.Models.Models[i]
		if t.Model == "" || m.Name == t.Model {
			if m.Engine != model.EngineScheduler {
				return nil, fmt.Errorf("model %q runs the %s engine: knee predict needs the scheduler engine, whose timing it simulates", m.Name, m.Engine)
			}
			return m, nil
		}
		names = append(names, m.Name)
	}
	return nil, fmt.Errorf("the models file serves no model %q (it serves %s)", t.Model, strings.Join(names, ", "))
}

// Config is the scheduler core's configuration of the target's model.
func (t Target) Config() (sched.Config, int, error) {
	m, err := t.model()
	if err != nil {
		return sched.Config{}, 0, err
	}
	return t.Models.SchedConfig(m), m.ContextLength, nil
}

// Disagg is the target model's disaggregated configuration, its routers
// drawing from seed; false when the model is served aggregated.
func (t Target) Disagg(seed uint64) (sched.DisaggConfig, bool) {
	m, err := t.model()
	if err != nil {
		return sched.DisaggConfig{}, false
	}
	return t.Models.DisaggConfig(m, seed)
}

// FitNote states how well the target model's tuning fitted the
// measurement it was calibrated to, for every prediction made from it to
// carry; empty for a model no calibration made.
func (t Target) FitNote() string {
	m, err := t.model()
	if err != nil || m.Fit == nil {
		return ""
	}
	f := m.Fit
	note := fmt.Sprintf("the model's tuning was calibrated against %s: mean error %.1f%% on %d fitted levels (worst figure %.1f%%)",
		f.Measured, f.TrainErrorPct, f.TrainLevels, f.WorstErrorPct)
	if f.HeldOutLevels > 0 {
		note += fmt.Sprintf(", %.1f%% on %d held-out levels", f.HeldOutErrorPct, f.HeldOutLevels)
	} else {
		note += ", none held out"
	}
	if len(f.StdErrs) > 0 {
		var errs []string
		for _, k := range slices.Sorted(maps.Keys(f.StdErrs)) {
			errs = append(errs, fmt.Sprintf("%s ± %g", k, f.StdErrs[k]))
		}
		note += "; " + strings.Join(errs, ", ")
	}
	if f.Verdict == results.FitPoor {
		note += "; a POOR fit, written with --accept-poor-fit: " + strings.Join(f.Problems, "; ")
	}
	return note
}

// FitCaveat says, for a model whose calibration was judged poor and
// written all the same (--accept-poor-fit), that figures predicted from
// it are no capacity answer; empty otherwise.
func (t Target) FitCaveat() string {
	m, err := t.model()
	if err != nil || m.Fit == nil || m.Fit.Verdict != results.FitPoor {
		return ""
	}
	return fmt.Sprintf("planned on a POOR fit (%.1f%% off on average on the levels it was fitted to, written with --accept-poor-fit): "+
		"the figures below are not a capacity answer; the note under the table says why the fit is poor", m.Fit.TrainErrorPct)
}

// KVCapacity is the target model's KV cache on one replica: its blocks
// and the tokens a block holds.
func (t Target) KVCapacity() (blocks, blockTokens int, err error) {
	cfg, _, err := t.Config()
	if err != nil {
		return 0, 0, err
	}
	return cfg.NumBlocks, cfg.BlockSize, nil
}

// SequencesHeld is how many sequences of tokens tokens fit at once in a
// cache of blocks blocks of blockTokens tokens (a sequence takes whole
// blocks).
func SequencesHeld(blocks, blockTokens int, tokens float64) int {
	per := math.Ceil(tokens / float64(blockTokens))
	if per < 1 || blocks < 1 {
		return 0
	}
	return int(float64(blocks) / per)
}

// Probe implements bench.Prober: the prompt tokens the simulator would
// count for r, so synthetic prompts are sized as against the live server.
func (t Target) Probe(r *workload.Request, rec *record.Record) {
	_, ctx, err := t.Config()
	if err != nil {
		rec.Class, rec.Message = record.ClassOther, err.Error()
		return
	}
	if t.kind().Pooled() {
		// Counted as knee sim counts a pooled request, so prompts are
		// sized to the same shape a live run's probes see.
		plan := model.PoolPlan(t.pooledInputs(r), false)
		rec.PromptTokens, rec.UsageReported = plan.PromptTokens, true
		return
	}
	plan, err := t.Responder.Generate(t.genRequest(r), ctx)
	if err != nil {
		rec.Class, rec.Message = errorClass(err), err.Error()
		return
	}
	rec.PromptTokens, rec.CompletionTokens, rec.UsageReported = plan.PromptTokens, len(plan.Tokens), true
}

// genRequest is r as the simulator's request decoder would hand it over.
func (t Target) genRequest(r *workload.Request) *content.GenRequest {
	chat := t.kind().Chat()
	g := &content.GenRequest{Model: t.Model, Chat: chat, IgnoreEOS: r.IgnoreEOS, WantIDs: true}
	if r.MaxTokens > 0 {
		n := r.MaxTokens
		g.MaxTokens = &n
	}
	if chat {
		for _, m := range r.Messages {
			text := m.Content
			for _, c := range m.ToolCalls {
				// The template renders the calls into the prompt.
				text += c.Name + c.Arguments
			}
			g.Messages = append(g.Messages, content.Message{Role: m.Role, Text: text})
		}
		g.ToolChoice = t.ToolChoice
		for _, tool := range r.Tools {
			g.Tools = append(g.Tools, tool.Name)
		}
		if len(g.Tools) > 0 {
			// As knee sim reads them: the tools, as sent, first in the
			// prompt.
			tools := string(wire.AppendTools(nil, r.Tools, t.kind().Tools))
			g.Messages = append([]content.Message{{Role: "system", Text: tools}}, g.Messages...)
		}
	} else {
		g.Prompt = r.Text()
	}
	return g
}

// errorClass is the bench's class for a simulator error.
func errorClass(err error) string {
	var api *content.APIError
	if errors.As(err, &api) {
		return fmt.Sprintf("http_%d:%s", api.Status, api.Type)
	}
	return record.ClassOther
}
