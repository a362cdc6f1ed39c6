// Package simulator is knee's bundled OpenAI-compatible LLM server: a
// GPU-free, deterministic stand-in for vLLM or SGLang. It is the
// composition root of its rooms, whose doors open one way:
//
//	content  what is said: responses DSL, matcher, tokenizer, generator → Plan
//	sched    the pure scheduler core (no goroutines, no clock): batching, paged KV, prefix cache
//	engine    when tokens are sent: instant, fixed_rate, and the scheduler's wall-time driver
//	telemetry vLLM-named Prometheus metrics and the exact-percentile summary
//	simulator the HTTP server, request decoding, SSE streaming, faults and
//	          the admin and summary endpoints; models.yml, presets, the child process
//
// engine imports content's plain types and sched; telemetry imports sched;
// content imports nothing of the simulator; none of the three sees HTTP;
// nothing here imports the bench. TestRoomsKeepTheirDoors enforces it. (The
// HTTP side and the configuration still share this root package: the next
// step gives the server its own room, leaving the root to compose.)
package simulator
