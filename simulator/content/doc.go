// Package content is the simulator's room for what is said: the
// responses DSL (responses.yml), the prompt matcher and its literal
// prefilter, the tokenizer, and the generator that turns a request into a
// Plan — its prompt tokens and the tokens of its answer.
//
// It never deals with time, HTTP or metrics: it imports nothing of the
// simulator (no engine, no server, no telemetry) and no HTTP or Prometheus
// library. Only plain data (GenRequest in, Plan or APIError out) crosses
// its door.
package content
