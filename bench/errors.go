package bench

import "errors"

// Errors of options that cannot run, named by the fields at fault. A
// command line maps them to its own flags (cmd does, in flagterms.go); the
// library does not know what its callers call them.
var (
	// ErrLoadMode: a Load needs exactly one of Concurrency (a closed loop)
	// and Rate (an open loop).
	ErrLoadMode = errors.New("a load takes exactly one of Concurrency (closed loop) and Rate (open loop)")
	// ErrUnbounded: a Load's measured window needs Requests, Duration or
	// a Trace to end.
	ErrUnbounded = errors.New("the measured window needs a bound: Requests, Duration or a Trace")
	// ErrNoCallRate: calls arrive at VoiceOptions.Rate per second, which
	// must be positive.
	ErrNoCallRate = errors.New("calls need a positive Rate (calls per second)")
	// ErrCallsUnbounded: calls need VoiceOptions.Calls or Duration to end.
	ErrCallsUnbounded = errors.New("calls need a bound: Calls or Duration")
)
