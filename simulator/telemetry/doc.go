// Package telemetry is the simulator's room for what it tells about
// itself: the vLLM-named Prometheus metrics (names, labels and buckets as
// vLLM publishes them, plus knee_sim_*) and the exact-percentile summary
// behind /metrics/summary.
//
// It records what it is told — plain numbers and sched's Step — and never
// serves HTTP, times tokens or reads content: it imports no fasthttp,
// engine, content or server code.
package telemetry
