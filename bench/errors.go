package bench

import "errors"

// Errors of options that cannot run, named by the fields at fault. A
// command line maps them to its own flags (cmd does, in flagterms.go); the
// library does not know what its callers call them.
var (
	// ErrNoCallRate: calls arrive at VoiceOptions.Rate per second, which
	// must be positive.
	ErrNoCallRate = errors.New("calls need a positive Rate (calls per second)")
	// ErrCallsUnbounded: calls need VoiceOptions.Calls or Duration to end.
	ErrCallsUnbounded = errors.New("calls need a bound: Calls or Duration")
)
