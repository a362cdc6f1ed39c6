package bench

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kneebench/knee/workload/kind"
)

// Body is the JSON merged into every request body: --extra-body with
// --reasoning-effort and --chat-template-kwarg added. A key given both
// ways is refused, so that no flag is silently overridden.
func (t TargetSpec) Body() (string, error) {
	if t.ReasoningEffort == "" && len(t.TemplateKwargs) == 0 {
		return t.ExtraBody, nil
	}
	m := map[string]json.RawMessage{}
	if t.ExtraBody != "" {
		if err := json.Unmarshal([]byte(t.ExtraBody), &m); err != nil {
			return "", fmt.Errorf("--extra-body must be a JSON object: %w", err)
		}
	}
	if e := t.ReasoningEffort; e != "" {
		switch e {
		case "low", "medium", "high":
		default:
			return "", fmt.Errorf("--reasoning-effort %q: use low, medium or high", e)
		}
		// Each API names the effort in its own field (the Responses API
		// nests it: reasoning: {effort}).
		field := t.Endpoint.Kind().Effort
		if field == "" {
			return "", fmt.Errorf("--reasoning-effort: the %s API takes no reasoning effort (--endpoint %s do)", t.Endpoint, kind.Where(func(k kind.Kind) bool { return k.Effort != "" }))
		}
		key, value := field, any(e)
		if outer, inner, nested := strings.Cut(field, "."); nested {
			key, value = outer, map[string]string{inner: e}
		}
		if _, ok := m[key]; ok {
			return "", fmt.Errorf("--extra-body sets %s and --reasoning-effort is given: give one", key)
		}
		m[key], _ = json.Marshal(value)
	}
	if len(t.TemplateKwargs) > 0 {
		if _, ok := m["chat_template_kwargs"]; ok {
			return "", fmt.Errorf("--extra-body sets chat_template_kwargs and --chat-template-kwarg is given: give one")
		}
		kw := map[string]json.RawMessage{}
		for _, kv := range t.TemplateKwargs {
			k, v, ok := strings.Cut(kv, "=")
			if k = strings.TrimSpace(k); !ok || k == "" {
				return "", fmt.Errorf("--chat-template-kwarg %q must look like KEY=VALUE, e.g. enable_thinking=false", kv)
			}
			if _, dup := kw[k]; dup {
				return "", fmt.Errorf("--chat-template-kwarg %s is given twice", k)
			}
			// A JSON value where VALUE is one (false, 3, {"a":1}), a
			// string otherwise.
			raw := json.RawMessage(v)
			if !json.Valid(raw) {
				raw, _ = json.Marshal(v)
			}
			kw[k] = raw
		}
		m["chat_template_kwargs"], _ = json.Marshal(kw)
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// BodyOrExtra is Body, or --extra-body alone when Body fails (Validate
// has said why by then).
func (t TargetSpec) BodyOrExtra() string {
	b, err := t.Body()
	if err != nil {
		return t.ExtraBody
	}
	return b
}
