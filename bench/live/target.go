package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/results"

	"github.com/kneebench/knee/bench/transport"
)

// TargetOf is the transport's target of the spec t at baseURL (the spec's own, or the
// built-in simulator's), with userAgent.
func TargetOf(t bench.TargetSpec, baseURL, userAgent string) transport.Target {
	out := transport.Target{
		BaseURL: baseURL, APIKey: t.APIKey, Endpoint: t.Endpoint, Model: t.Model,
		ExtraBody: json.RawMessage(t.BodyOrExtra()), IgnoreEOS: t.IgnoreEOS, Timeout: t.Timeout, UserAgent: userAgent, Retries: t.Retries,
		RequestTimeout: t.RequestTimeout, IdleConnTimeout: t.IdleConnTimeout, ServerHistory: t.History == "server",
	}
	for _, h := range t.Headers {
		k, v, _ := strings.Cut(h, ":")
		out.Headers = append(out.Headers, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	out.Tools, out.ToolChoice = t.ToolList, t.ToolChoice
	out.ToolRounds, out.ToolResult = t.ToolRounds, t.ToolResult
	return out
}

// ErrNotServed is the error of a --model the server does not list.
var ErrNotServed = errors.New("not served")

// Resolved is a target ready to be driven: its model named, and the
// model's context as its server lists it (0: not said).
type Resolved struct {
	Target        transport.Target
	ContextTokens int
	// Warning, when set, says the model could not be checked against the
	// server's list, which did not answer as one.
	Warning string
}

// Resolve asks the server which models it serves: the first is the
// target's when none was named, and a named one must be among them. A
// server whose model list fails is still measured when the model was
// named (with a warning); nothing answering at all is an error.
// ErrNotServed and transport.ErrRedirect mark the errors that are the
// user's to fix.
func Resolve(ctx context.Context, t transport.Target) (*Resolved, error) {
	r := &Resolved{Target: t}
	models, err := transport.ListModelInfo(ctx, t)
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = m.ID
	}
	switch {
	case errors.Is(err, transport.ErrRedirect), err != nil && t.Model == "":
		return nil, err
	case err != nil && !errors.As(err, new(*transport.ModelsStatusError)):
		// Nothing answered at all: the target is down or unreachable.
		return nil, err
	case err != nil:
		// The model was named; a server without a model list can still be
		// measured.
		r.Warning = fmt.Sprintf("could not check --model %s against the server's list: %v", t.Model, err)
	case t.Model == "":
		if len(ids) == 0 {
			return nil, fmt.Errorf("%s/models lists no model; give --model", results.RedactURL(strings.TrimRight(t.BaseURL, "/")))
		}
		r.Target.Model = ids[0]
	case !slices.Contains(ids, t.Model):
		return nil, fmt.Errorf("--model %q is %w by %s (it serves: %s)", t.Model, ErrNotServed, results.RedactURL(t.BaseURL), strings.Join(ids, ", "))
	}
	for _, m := range models {
		if m.ID == r.Target.Model {
			r.ContextTokens = m.ContextTokens
		}
	}
	return r, nil
}

// FitsContext refuses, before the first request, a workload whose
// longest request (tokens, and what it is) cannot fit the model's
// context as its server lists it: every such request would fail (vLLM
// answers 400; some servers reset the connection).
func (r *Resolved) FitsContext(longest int, what string) error {
	if r.ContextTokens <= 0 || longest <= r.ContextTokens {
		return nil
	}
	return fmt.Errorf("%s is %d tokens, past the %d-token context %s lists for %s", what, longest, r.ContextTokens,
		results.RedactURL(r.Target.BaseURL)+"/models", r.Target.Model)
}
