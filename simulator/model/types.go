package model

import (
	"fmt"

	"github.com/kneebench/knee/simulator/content"
	"github.com/kneebench/knee/simulator/engine"
)

// The content and engine rooms' types, as the models file names them.
type (
	Message    = content.Message
	GenRequest = content.GenRequest
	Plan       = content.Plan
	APIError   = content.APIError
	Engine     = engine.Engine
	FixedRate  = engine.FixedRate
	Scheduler  = engine.Scheduler
)

// badRequest is a 400 naming the request's field at fault.
func badRequest(param, format string, a ...any) *APIError {
	return &APIError{Status: 400, Type: "invalid_request_error", Param: param, Message: fmt.Sprintf(format, a...)}
}
