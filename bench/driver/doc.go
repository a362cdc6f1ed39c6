// Package driver is the one load driver. It owns a level's arrivals, its
// measured window, the caps on what is in flight, the shedding of calls,
// the count of arrivals never sent, the drain and its cut, and the record
// of every request, for single requests and for multi-turn calls alike.
//
// It runs against two small interfaces: a Clock (the wall clock of a live
// run, or the simulated time of a prediction) and a Sender (the HTTP
// client, or the simulator's scheduler core). Live runs, shards and
// knee predict, plan and calibrate all run their levels through it, so
// each rule is written once and a live run and its prediction cannot
// drift apart.
//
// The driver is one event loop: a single dispatcher handles every timed
// event (an arrival falling due, a slot coming free, a closed-loop stream
// ready for its next request, a call's next turn, the window's end, the
// drain's cut) in time order, and a Sender reports each request's end
// through Flight.Done, from whatever goroutine it likes. Senders never
// block the dispatcher: a live sender hands the request to a goroutine of
// its own, a virtual one queues it in the simulated server.
package driver
