// Package bench runs a workload and returns its results; it prints
// nothing. Its root is what a live level and a predicted one share: a
// Level of Requests or Calls, run by a Runner (live.Live on the wall
// clock, predict.Virtual in virtual time) and one Sweep loop for both;
// Series and Prepared, a spec's loads and work; prompts sized against a
// server's tokenizer (Calibrate, SizedPrompts, a Prober); and the
// recorded configuration mapped to and from loads (RecordRequests,
// ReplayLoad); Watcher, what sees a live level beside the client (the
// server's view, the GPUs, a cache reset before it, the server's
// profiler over its window). It links no HTTP client, so the predictor
// links none. Its rooms, whose doors open one way:
//
//	record      what one request measured, and the --records line it is written as
//	transport   HTTP/SSE: the fasthttp client, a protocol file per request kind, connections, error classes
//	driver      the one load driver: arrivals, windows, caps, shedding, unsent, drain, on a Clock with a Sender
//	summary     records in, result out: histograms, saturation, cache hits, health, small print
//	live        the live runner: the driver on a wall clock sending with the transport, watchers
//	            of a level (cache reset, profiler), the target resolved, prefix caching checked
//	serverview  the server's own view (its /metrics/summary or Prometheus) set against the client's
//	gpumetrics  GPU exporters read over a level: power, energy, utilisation
//
// TestHouseKeepsItsDoors fails when a door is broken.
package bench
