package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kneebench/knee/simulator/sched"
)

// EngineRules is one serving engine's scheduling rules, as a model's
// schedules_as names them: what it does to the scheduler core's
// configuration, and which of knee's policies it has.
type EngineRules struct {
	Name string
	// Policies are the scheduling_policy values the engine has.
	Policies []string
	// LongPrefill says it has vLLM's long_prefill_token_threshold.
	LongPrefill bool
	// apply sets the engine's rules and defaults on cfg for a GPU of
	// hbmGiB and a model of contextLen tokens; nil keeps vLLM V1's.
	apply func(cfg *sched.Config, hbmGiB float64, contextLen int)
}

// Engines are the engines a model can schedule as; the first, vLLM V1,
// is the default.
var Engines = []EngineRules{
	{Name: SchedulesVLLM, Policies: []string{sched.PolicyFCFS, sched.PolicyPriority}, LongPrefill: true},
	{Name: SchedulesVLLMV0, Policies: []string{sched.PolicyFCFS, sched.PolicyPriority}, apply: VLLMV0Rules},
	{Name: SchedulesSGLang, Policies: []string{sched.PolicyFCFS, sched.PolicyLPM, sched.PolicyPriority}, apply: SGLangRules},
	{Name: SchedulesTRTLLM, Policies: []string{sched.PolicyFCFS}, apply: TRTLLMRules},
}

// EngineNamed is the engine called name ("" is vLLM V1).
func EngineNamed(name string) (EngineRules, bool) {
	if name == "" {
		return Engines[0], true
	}
	i := slices.IndexFunc(Engines, func(e EngineRules) bool { return e.Name == name })
	if i < 0 {
		return EngineRules{}, false
	}
	return Engines[i], true
}

// EngineNames lists the engines' names, for help and errors.
func EngineNames() string {
	var names []string
	for _, e := range Engines {
		names = append(names, e.Name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// RulesWords are the names a user writes for the engine, the policy and
// the long-prefill threshold, and what joins a name to its value: a
// models file's fields ("schedules_as" and ": "), knee plan's flags
// ("--schedules-as" and " ").
type RulesWords struct{ Engine, Policy, LongPrefill, Join string }

// FileWords and FlagWords are a models file's and knee plan's.
var (
	FileWords = RulesWords{"schedules_as", "scheduling_policy", "long_prefill_token_threshold", ": "}
	FlagWords = RulesWords{"--schedules-as", "--scheduling-policy", "--long-prefill-token-threshold", " "}
)

// RulesProblem says what is wrong with scheduling by engine with policy
// and a long-prefill threshold, in words; "" when nothing is.
func RulesProblem(engine, policy string, longPrefill int, words RulesWords) string {
	e, ok := EngineNamed(engine)
	if !ok {
		return fmt.Sprintf("%s %q: %s", words.Engine, engine, EngineNames())
	}
	give := func(name string) string { return words.Engine + words.Join + name }
	if policy != "" && !slices.Contains(e.Policies, policy) {
		var has, gives []string
		for _, o := range Engines {
			if slices.Contains(o.Policies, policy) {
				has, gives = append(has, o.Name), append(gives, give(o.Name))
			}
		}
		why := fmt.Sprintf("%s %q: %s under %s's rules", words.Policy, policy, strings.Join(e.Policies, " or "), e.Name)
		if len(has) > 0 {
			why += fmt.Sprintf(" (%s is %s's: %s)", policy, strings.Join(has, " and "), strings.Join(gives, " or "))
		}
		return why
	}
	if longPrefill > 0 && !e.LongPrefill {
		return fmt.Sprintf("%s is vLLM V1's; %s (%s) has none", words.LongPrefill, e.Name, give(e.Name))
	}
	return ""
}

// CheckRules checks a model's scheduling rules and policy against its
// engine's.
func CheckRules(m *ModelSpec) error {
	why := RulesProblem(m.SchedulesAs, m.SchedulingPolicy, m.LongPrefillTokenThreshold, FileWords)
	if why != "" {
		return errors.New(why)
	}
	return nil
}

// VLLMV0Rules makes cfg schedule as vLLM V0's default scheduler did
// (vllm/core/scheduler.py _schedule_default, config.py SchedulerConfig,
// 0.6–0.9): at most 256 sequences, a 1% watermark of free blocks kept at
// admission, and for a model of up to 32,768 tokens no chunked prefill:
// waiting prompts are scheduled first, each whole, and a step that
// prefills runs no decode ("Don't schedule decodes if prefills are
// scheduled"), its budget max(max_model_len, 2048) tokens. For longer
// contexts the OpenAI server turned chunked prefill on, budget 2,048, with
// decodes first as V1 schedules. Multi-step scheduling
// (--num-scheduler-steps) is num_scheduler_steps (checkMultiStep).
func VLLMV0Rules(cfg *sched.Config, _ float64, contextLen int) {
	cfg.Rules, cfg.MaxNumSeqs, cfg.Watermark = SchedulesVLLMV0, 256, 0.01
	if contextLen > v0WholeContext {
		cfg.MaxNumBatchedTokens = 2048
		return
	}
	cfg.PrefillFirst, cfg.WholePrompts = true, true
	cfg.MaxNumBatchedTokens = max(contextLen, 2048)
}

// TRTLLMRules makes cfg schedule as TensorRT-LLM's in-flight batching
// does by default: the GUARANTEED_NO_EVICT capacity scheduler (a request
// starts only when its prompt and whole answer fit the KV cache beside the
// running requests' reservations, and none is ever paused), chunked
// context off (a prompt is computed in one step, so one longer than
// max_num_tokens is refused), context and generation requests in one
// step, 8,192 tokens a step. The batch size is left to the model:
// trtllm-serve's default has changed between releases.
func TRTLLMRules(cfg *sched.Config, _ float64, _ int) {
	cfg.Rules, cfg.ReserveOutput, cfg.WholePrompts = SchedulesTRTLLM, true, true
	cfg.MaxNumBatchedTokens = 8192
}

// StartLimit is the longest max_model_len vLLM starts m with, when that
// is under the context m serves: vLLM checks at start that its KV cache
// holds one request of max_model_len tokens and refuses to start
// otherwise ("larger than the maximum number of tokens that can be stored
// in KV cache"). 0 when the cache holds the whole context, or when m
// schedules as SGLang or TensorRT-LLM, which start and cap a request's
// length instead.
func (f *ModelsFile) StartLimit(m *ModelSpec) int {
	cfg := f.SchedConfig(m)
	if cfg.Rules != "" && cfg.Rules != SchedulesVLLM && cfg.Rules != SchedulesVLLMV0 {
		return 0
	}
	if n := cfg.LongestFit(m.ContextLength); n < m.ContextLength {
		return n
	}
	return 0
}
