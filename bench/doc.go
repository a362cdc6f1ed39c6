// Package bench runs a workload against an OpenAI-compatible endpoint and
// returns its results; it prints nothing. It is the client side's
// composition root, over rooms whose doors open one way:
//
//	record      what one request measured, and the --records line it is written as
//	transport   HTTP/SSE: the fasthttp client, protocols (chat, completions, SGLang's /generate), connections, error classes
//	driver      the one load driver: arrivals, windows, caps, shedding, unsent, drain, on a Clock with a Sender
//	summary     records in, result out: histograms, saturation, cache hits, health, small print
//	serverview  the server's own view (its /metrics/summary or Prometheus) set against the client's
//
// This package wires them for a live level (Run, RunVoice: the driver on a
// wall clock sending with the transport, every measured record into the
// summary), runs sweeps (RunSweep), sizes prompts against the server's
// tokenizer (Calibrate), checks prefix caching (CheckPrefixCache), and
// maps loads to and from the recorded configuration (RecordLoad,
// ReplayLoad). knee predict drives the same driver and summary with the
// simulator's core instead of a transport. TestHouseKeepsItsDoors fails
// when a door is broken.
package bench
