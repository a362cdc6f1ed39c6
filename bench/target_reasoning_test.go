package bench

import (
	"strings"
	"testing"

	"github.com/kneebench/knee/workload/kind"
)

// TestBodyCarriesTheThinkingKnobs: --reasoning-effort and
// --chat-template-kwarg join --extra-body in every request's body, values
// read as JSON where they are; a key given both ways, an unknown effort or
// a malformed pair is refused naming the flag.
func TestBodyCarriesTheThinkingKnobs(t *testing.T) {
	for _, c := range []struct {
		spec      TargetSpec
		want, err string
	}{
		{TargetSpec{}, "", ""},
		{TargetSpec{ExtraBody: `{"top_k":5}`}, `{"top_k":5}`, ""},
		{TargetSpec{ReasoningEffort: "low"}, `{"reasoning_effort":"low"}`, ""},
		{TargetSpec{ReasoningEffort: "high", Endpoint: kind.Name("responses")}, `{"reasoning":{"effort":"high"}}`, ""},
		{TargetSpec{ReasoningEffort: "high", Endpoint: kind.Name("responses"), ExtraBody: `{"reasoning":{}}`}, "", "sets reasoning and"},
		{TargetSpec{TemplateKwargs: []string{"enable_thinking=false", "name=qwen", "depth=3"}, ExtraBody: `{"top_k":5}`},
			`{"chat_template_kwargs":{"depth":3,"enable_thinking":false,"name":"qwen"},"top_k":5}`, ""},
		{TargetSpec{ReasoningEffort: "max"}, "", "--reasoning-effort"},
		{TargetSpec{ReasoningEffort: "high", ExtraBody: `{"reasoning_effort":"low"}`}, "", "give one"},
		{TargetSpec{TemplateKwargs: []string{"enable_thinking"}}, "", "KEY=VALUE"},
		{TargetSpec{TemplateKwargs: []string{"a=1", "a=2"}}, "", "given twice"},
		{TargetSpec{TemplateKwargs: []string{"a=1"}, ExtraBody: `{"chat_template_kwargs":{}}`}, "", "give one"},
	} {
		got, err := c.spec.Body()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: %q, %v; want an error naming %q", c.spec, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%+v: %q, %v; want %q", c.spec, got, err, c.want)
		}
	}
}
