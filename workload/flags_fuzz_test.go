package workload

import "testing"

// FuzzParseTools: a tools file is foreign (OpenAI's tool list, BFCL's
// functions). Whatever it holds, it parses to named tools or an error
// that says which entry is at fault, never a panic.
func FuzzParseTools(f *testing.F) {
	for _, s := range []string{
		`[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`,
		`{"tools":[{"name":"g","description":"d","parameters":{"type":"dict","properties":{}}}]}`,
		`[]`, `{}`, `[1]`, `[{"type":"function"}]`, `{"tools":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tools, err := ParseTools(data)
		if err != nil {
			return
		}
		for i, tool := range tools {
			if tool.Name == "" {
				t.Fatalf("tool %d of %q has no name", i, data)
			}
		}
	})
}

// FuzzParseSizes: --image-size, typed by hand.
func FuzzParseSizes(f *testing.F) {
	for _, s := range []string{"512x512", "64x64,1024x768", "0x1", "8193x1", "x", ",", "1x1x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sizes, err := ParseSizes(s)
		if err != nil {
			return
		}
		for _, z := range sizes {
			if z.W < 1 || z.H < 1 || z.W > 8192 || z.H > 8192 {
				t.Fatalf("%q: size %+v", s, z)
			}
		}
	})
}
