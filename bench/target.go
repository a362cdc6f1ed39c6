package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
)

// TargetSpec is the endpoint to drive, as the target flags give it: each
// field is the flag of its name, and every error names the flags at
// fault.
type TargetSpec struct {
	BaseURL, Model, APIKey string
	// Endpoint is chat, completions, generate or responses.
	Endpoint transport.Endpoint
	// Headers are --header values, Name:value.
	Headers   []string
	ExtraBody string
	IgnoreEOS bool
	// ReasoningEffort is --reasoning-effort (sent as reasoning_effort);
	// TemplateKwargs are --chat-template-kwarg KEY=VALUE (sent in
	// chat_template_kwargs, VALUE read as JSON where it is, a string
	// otherwise: enable_thinking=false turns Qwen3's thinking off).
	ReasoningEffort string
	TemplateKwargs  []string
	// History is --history: "full" (or "") sends a call's whole
	// conversation every turn; "server" names the answer before
	// (previous_response_id, the Responses API only) and sends only the
	// turn's new messages.
	History string
	// Tools is --tools: builtin, or a file of tool schemas (ReadTools);
	// ToolChoice is --tool-choice: auto, required, none or a tool's
	// name. ToolsPerRequest says the dataset's requests bring their own
	// tools (BFCL), which a choice may then go with.
	Tools, ToolChoice string
	ToolsPerRequest   bool
	// ToolRounds is --tool-rounds and ToolResult --tool-result: how many
	// times in a call's turn a tool call is answered, and with what.
	ToolRounds int
	ToolResult string
	// ToolList is the tools --tools gives, once ReadTools read them.
	ToolList []workload.Tool
	// Timeout is --timeout, RequestTimeout --request-timeout and
	// IdleConnTimeout --idle-conn-timeout.
	Timeout, RequestTimeout, IdleConnTimeout time.Duration
	Retries                                  int
}

// Validate checks what needs no network.
func (t TargetSpec) Validate() error {
	if err := kind.Check(t.Endpoint); err != nil {
		return fmt.Errorf("--endpoint %w", err)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--timeout", t.Timeout}, {"--request-timeout", t.RequestTimeout}, {"--idle-conn-timeout", t.IdleConnTimeout}} {
		if err := outsideDuration(d.flag, d.v, MaxWait); err != nil {
			return err
		}
	}
	if t.Timeout < 0 || t.Retries < 0 || t.RequestTimeout < 0 || t.IdleConnTimeout < 0 {
		return errors.New("--timeout, --request-timeout, --idle-conn-timeout and --retries must not be negative")
	}
	if t.Retries > 100 {
		return fmt.Errorf("--retries %d is absurd; at most 100", t.Retries)
	}
	if t.BaseURL != "" {
		if err := CheckBaseURL(t.BaseURL); err != nil {
			return err
		}
	}
	for _, h := range t.Headers {
		if k, _, ok := strings.Cut(h, ":"); !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("--header %q must look like Name:value", h)
		}
	}
	switch t.History {
	case "", "full":
	case "server":
		if !t.Endpoint.Kind().History {
			return fmt.Errorf("--history server needs an API whose server holds the conversation (--endpoint %s: previous_response_id); got --endpoint %s",
				kind.Where(func(k kind.Kind) bool { return k.History }), t.Endpoint)
		}
	default:
		return fmt.Errorf("--history must be full or server, got %q", t.History)
	}
	if _, err := t.Body(); err != nil {
		return err
	}
	if err := t.checkToolRounds(); err != nil {
		return err
	}
	if t.ExtraBody == "" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(t.ExtraBody), &m); err != nil {
		return fmt.Errorf("--extra-body must be a JSON object: %w", err)
	}
	// knee streams and names the model itself; a body that changed either
	// would measure something else than it reports.
	for _, k := range []string{"stream", "model"} {
		if _, ok := m[k]; ok {
			return fmt.Errorf("--extra-body may not set %q (knee always streams; use --model)", k)
		}
	}
	if _, ok := m["ignore_eos"]; ok && t.IgnoreEOS {
		return errors.New("--extra-body sets ignore_eos and --ignore-eos is given: give one")
	}
	return nil
}

// CheckBaseURL catches the usual mistakes in --base-url before anything
// is sent, with a hint at the fix.
func CheckBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		if !strings.Contains(raw, "://") {
			return fmt.Errorf("--base-url %q has no scheme: try http://%s", raw, strings.TrimLeft(raw, "/"))
		}
		return fmt.Errorf("--base-url %q is not a URL like http://host:8000/v1", raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("--base-url %q: the scheme must be http or https", raw)
	}
	p := strings.TrimRight(u.Path, "/")
	for _, suffix := range []string{"/chat/completions", "/completions", "/responses", "/models"} {
		if strings.HasSuffix(p, suffix) {
			return fmt.Errorf("--base-url %q names an endpoint; give the API root instead: %s", raw, strings.TrimSuffix(strings.TrimRight(raw, "/"), suffix))
		}
	}
	return nil
}

// Target is the transport's target at baseURL (the spec's own, or the
// built-in simulator's), with userAgent.
func (t TargetSpec) Target(baseURL, userAgent string) transport.Target {
	out := transport.Target{
		BaseURL: baseURL, APIKey: t.APIKey, Endpoint: t.Endpoint, Model: t.Model,
		ExtraBody: json.RawMessage(t.bodyOrExtra()), IgnoreEOS: t.IgnoreEOS, Timeout: t.Timeout, UserAgent: userAgent, Retries: t.Retries,
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

// Warnings are what the spec's flags do that their user may not mean.
func (t TargetSpec) Warnings() []string {
	if t.APIKey == "" {
		return nil
	}
	for _, h := range t.Headers {
		if k, _, _ := strings.Cut(h, ":"); strings.EqualFold(strings.TrimSpace(k), "Authorization") {
			return []string{"--header Authorization replaces the Bearer token of --api-key (or $OPENAI_API_KEY)"}
		}
	}
	return nil
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
