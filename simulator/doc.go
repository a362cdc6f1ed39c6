// Package simulator is knee's bundled OpenAI-compatible LLM server: a
// GPU-free, deterministic stand-in for vLLM or SGLang. This package is the
// composition root — the built-in files, the child-process mode, and the
// small surface cmd uses — over rooms whose doors open one way:
//
//	content   what is said: responses DSL, matcher, tokenizer, generator → Plan
//	sched     the pure scheduler core (no goroutines, no clock): batching, paged KV, prefix cache
//	engine    when tokens are sent: instant, fixed_rate, the scheduler's wall-time driver
//	telemetry vLLM-named Prometheus metrics and the exact-percentile summary
//	model     models.yml and what a model does: reasoning, tools, vision, pooling, LoRA, faults, engine rules
//	server    HTTP (the only fasthttp importer): a handler a request kind, one stream loop, admin
//
// server → model, content, engine, telemetry, sched; model → content,
// engine, sched; engine → content's plain types, sched; telemetry →
// sched; content → nothing of the simulator.
// Nothing here imports the bench. TestRoomsKeepTheirDoors and
// TestOnlyTheServerSpeaksHTTP fail when a door is broken.
package simulator
