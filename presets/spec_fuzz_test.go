package presets

import "testing"

// FuzzParseSpec: a preset spec (GPU[xN]/MODEL[@DTYPE[,kv=DTYPE]]) is typed
// by hand. It parses to a spec that writes back as text that parses to
// the same, or to an error, never a panic.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"h100-80gbx2/llama-3.1-70b@fp8,kv=fp8", "h200/llama-3.1-8b", "x/y", "h100-80gbx0/llama-3.1-8b",
		"h100-80gbx99999999999/llama-3.1-8b", "/", "h100-80gb/llama-3.1-8b@", "h100-80gb/llama-3.1-8b@fp8,kv="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseSpec(s)
		if err != nil {
			return
		}
		if spec.GPUs < 1 {
			t.Fatalf("%q: %d GPUs", s, spec.GPUs)
		}
		again, err := ParseSpec(spec.String())
		if err != nil || again.String() != spec.String() {
			t.Fatalf("%q writes as %q, which reads %q, %v", s, spec.String(), again.String(), err)
		}
	})
}
