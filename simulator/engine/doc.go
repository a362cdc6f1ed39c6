// Package engine is the simulator's room for when tokens are sent: the
// Engine interface and its three engines — instant, fixed_rate, and the
// scheduler's wall-time driver around the pure core in sched.
//
// It never deals with content or HTTP: it takes a content.Plan (plain
// data: token counts and texts it does not read) and emits TokenEvents.
// It imports sched and content's plain types only — never fasthttp, the
// server, or telemetry; metrics reach it through the step callback given
// to NewScheduler.
package engine
