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
		{"headers: {X-Tenant: \"a\\r\\nX-Other: b\"}", "not a valid header"},
		{`headers: {Content-Length: "5"}`, "frames the request"},
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

// FuzzMixFile: any bytes read as a mix file either are refused or give
// classes that each pass their own check and whose shares sum to one
// (or that give their rates), never a panic.
func FuzzMixFile(f *testing.F) {
	f.Add([]byte("classes:\n  - {name: a, share: 1, input_tokens: 8, max_tokens: 4}\n"))
	f.Add([]byte("classes:\n  - {name: a, rate: 2, input_tokens: 8, max_tokens: 4, headers: {X-T: v}, extra_body: {temperature: 0}}\n  - {name: b, rate: 1, input_tokens: 8, max_tokens: 4}\n"))
	f.Add([]byte("classes: [{name: \"a\\0\", share: 0.5}]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMix(b)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for i := range m.Classes {
			if err := m.Classes[i].check(seen); err != nil {
				t.Fatalf("class %d passed the file but not its check: %v", i, err)
			}
		}
	})
}
