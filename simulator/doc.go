// Package simulator is knee's bundled OpenAI-compatible LLM server: a
// GPU-free, deterministic stand-in for vLLM or SGLang. It is the
// composition root of its rooms, whose doors open one way:
//
//	content  what is said: responses DSL, matcher, tokenizer, generator → Plan
//	sched    the pure scheduler core (no goroutines, no clock): batching, paged KV, prefix cache
//	engine   when tokens are sent: instant, fixed_rate, and the scheduler's wall-time driver
//	simulator the HTTP server, request decoding, SSE streaming, faults,
//	         vLLM-named metrics and the summary; models.yml, presets, the child process
//
// engine imports content's plain types and sched; content imports nothing of
// the simulator; neither sees HTTP or Prometheus; nothing here imports the
// bench. TestRoomsKeepTheirDoors enforces it. (The server, telemetry and
// configuration still share this package; they are the next to get rooms.)
package simulator
