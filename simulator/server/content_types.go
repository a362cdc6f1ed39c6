package server

import (
	"github.com/kneebench/knee/simulator/content"
	"github.com/kneebench/knee/simulator/engine"
	"github.com/kneebench/knee/simulator/telemetry"
)

// The content room's types, as the rest of the simulator names them.
type (
	Message    = content.Message
	GenRequest = content.GenRequest
	Plan       = content.Plan
	APIError   = content.APIError
	Responder  = content.Responder
)

// ParseResponses parses and validates a responses file (see
// content.ParseResponses).
func ParseResponses(name string, data []byte) (*Responder, error) {
	return content.ParseResponses(name, data)
}

// CountTokens counts tokens as the simulator's tokenizer does.
func CountTokens(s string) int { return content.CountTokens(s) }

// The engine room's types, as the rest of the simulator names them.
type (
	Engine     = engine.Engine
	TokenEvent = engine.TokenEvent
	StreamInfo = engine.StreamInfo
	Instant    = engine.Instant
	FixedRate  = engine.FixedRate
	Scheduler  = engine.Scheduler
)

// NewScheduler starts the scheduler engine (see engine.NewScheduler).
var NewScheduler = engine.NewScheduler

// errClientGone ends a stream whose client went away.
var errClientGone = engine.ErrClientGone

// The telemetry room's summary types, as /metrics/summary shows them.
type (
	ModelSummary     = telemetry.ModelSummary
	SchedulerSummary = telemetry.SchedulerSummary
)
