package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
)

// TargetSpec is the endpoint to drive, as the target flags give it: each
// field is the flag of its name, and every error names the flags at
// fault.
type TargetSpec struct {
	BaseURL, Model, APIKey string
	// Endpoint is chat, completions, generate or responses.
	Endpoint kind.Name
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
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("--header %q must look like Name:value", h)
		}
		if err := workload.CheckHeader(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return fmt.Errorf("--header: %w", err)
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
	// knee writes the model, the stream, the prompts and their lengths
	// itself; a body that changed one would measure something else than
	// it reports.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if why, own := workload.OwnBodyKey(k); own {
			return fmt.Errorf("--extra-body may not set %q: %s", k, why)
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
