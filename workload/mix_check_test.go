package workload

import (
	"strings"
	"testing"
)

// TestMixClassRefusedUpFront: a class whose headers or extra body would
// make every request fail is refused when the file is read, naming it.
func TestMixClassRefusedUpFront(t *testing.T) {
	base := "classes:\n  - {name: a, share: 1, input_tokens: 8, max_tokens: 4, %s}\n"
	for _, tc := range []struct{ field, want string }{
		{`headers: {"X-T(x)": "a"}`, "not a valid header"},
		{"headers: {X-Tenant: \"a\\0b\"}", "not a valid header"},
		{`headers: {"X Tenant": "a"}`, "not a valid header"},
		{"extra_body: {Model: x}", `extra_body sets "Model"`},
		{"extra_body: {STREAM: false}", `extra_body sets "STREAM"`},
	} {
		_, err := ParseMix([]byte(strings.Replace(base, "%s", tc.field, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.field, err, tc.want)
		}
	}
	if _, err := ParseMix([]byte(strings.Replace(base, "%s", `headers: {X-Tenant: "a b"}, extra_body: {temperature: 0}`, 1))); err != nil {
		t.Errorf("a good class refused: %v", err)
	}
}
