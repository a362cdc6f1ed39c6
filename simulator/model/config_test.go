package model

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/kneebench/knee/presets"
	"github.com/kneebench/knee/simulator/content"
	"github.com/kneebench/knee/simulator/sched"
)

// schedModel is a valid models file of one scheduler model, which the
// validation cases break one field at a time.
const schedModel = `
hardware:
  gpu: {hbm_gib: 80, memory_bandwidth_gbps: 3000, peak_tflops: 989}
models:
  - name: m
    context_length: 4096
    engine: scheduler
    hardware: gpu
    weights: {parameters_billions: 7, bytes_per_parameter: 2}
    kv_cache: {bytes_per_token: 524288}
    scheduler: {max_num_batched_tokens: 2048, max_num_seqs: 8}
`

// TestModelsValidation has one case per rule: each file must be refused
// with a message naming the file and the model or section at fault.
func TestModelsValidation(t *testing.T) {
	sched := schedModel
	if _, err := ParseModels("ok.yml", []byte(sched)); err != nil {
		t.Fatalf("valid file refused: %v", err)
	}
	cases := []struct {
		name, file, want string
	}{
		{"unknown key", strings.Replace(sched, "engine: scheduler", "engine: scheduler\n    colour: blue", 1), "colour"},
		{"duplicate name", sched + "  - name: m\n    context_length: 10\n    engine: instant\n", "duplicate name"},
		{"unknown profile", strings.Replace(sched, "hardware: gpu", "hardware: tpu", 1), `unknown hardware profile "tpu"`},
		{"missing section", strings.Replace(sched, "    scheduler: {max_num_batched_tokens: 2048, max_num_seqs: 8}\n", "", 1), "needs a scheduler section"},
		{"missing fixed_rate", "models:\n  - name: f\n    context_length: 10\n    engine: fixed_rate\n", "needs a fixed_rate section"},
		{"unknown engine", "models:\n  - name: f\n    context_length: 10\n    engine: warp\n", `unknown engine "warp"`},
		{"no engine", "models:\n  - name: f\n    context_length: 10\n", "missing engine"},
		{"no context", "models:\n  - name: f\n    engine: instant\n", "context_length"},
		{"no models", "models: []\n", "no models"},
		{"weights too big", strings.Replace(sched, "parameters_billions: 7", "parameters_billions: 70", 1), "no block"},
		{"bad efficiency", strings.Replace(sched, "    scheduler:", "    efficiency: {compute: 2, memory: 1}\n    scheduler:", 1), "efficiency"},
		{"bad fault", strings.Replace(sched, "    scheduler:", "    faults: {rules: [{kind: meteor, rate: 0.1}]}\n    scheduler:", 1), `unknown kind "meteor"`},
		{"bad hardware", strings.Replace(sched, "hbm_gib: 80", "hbm_gib: 0", 1), `hardware "gpu"`},
		// Numbers no GPU or model has would give times and energies past
		// what Go holds, or NaN; each is refused naming its field.
		{"NaN anywhere", strings.Replace(sched, "peak_tflops: 989", "peak_tflops: .nan", 1), ".nan is not a finite number"},
		{"infinite", strings.Replace(sched, "max_num_seqs: 8", "max_num_seqs: 8, x: -.inf", 1), "-.inf is not a finite number"},
		{"bandwidth near 0", strings.Replace(sched, "memory_bandwidth_gbps: 3000", "memory_bandwidth_gbps: 1e-300", 1), "memory_bandwidth_gbps from 1"},
		{"tflops huge", strings.Replace(sched, "peak_tflops: 989", "peak_tflops: 1e300", 1), "peak_tflops from 0.01"},
		{"tiny efficiency", strings.Replace(sched, "    scheduler:", "    efficiency: {compute: 1e-300, memory: 1}\n    scheduler:", 1), "from 0.001 to 1"},
		{"huge overhead", strings.Replace(sched, "    scheduler:", "    latency: {step_overhead_ms: 1e300}\n    scheduler:", 1), "step_overhead_ms from 0"},
		{"tiny model", strings.Replace(sched, "parameters_billions: 7", "parameters_billions: 1e-300", 1), "parameters_billions from"},
		{"huge heads", strings.Replace(sched, "    scheduler:", "    architecture: {hidden_size: 4096, attention_heads: 3000000000000}\n    scheduler:", 1), "attention_heads from 0"},
		{"fixed rate overflow", "models:\n  - name: f\n    context_length: 10\n    engine: fixed_rate\n    fixed_rate: {overhead_ms: 5, prefill_tokens_per_second: 100, decode_tokens_per_second: 1e-300}\n", "from 0.001 to 1e9"},
		{"empty", "", "empty"},
	}
	for _, tc := range cases {
		_, err := ParseModels("models.yml", []byte(tc.file))
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "models.yml") {
			t.Errorf("%s: error %q, want it to name models.yml and contain %q", tc.name, err, tc.want)
		}
	}
}

func TestResponsesValidation(t *testing.T) {
	base := "version: 1\nresponses:\n  - id: a\n    match: {contains: x}\n    content: \"ok\"\ndefault: {content: d}\n"
	if _, err := content.ParseResponses("r.yml", []byte(base)); err != nil {
		t.Fatalf("valid file refused: %v", err)
	}
	cases := []struct{ name, file, want string }{
		{"unknown key", strings.Replace(base, "content: \"ok\"", "content: \"ok\"\n    tone: warm", 1), "tone"},
		{"duplicate id", strings.Replace(base, "default:", "  - id: a\n    match: {contains: y}\n    content: z\ndefault:", 1), `entry "a": duplicate id`},
		{"bad regex", strings.Replace(base, "{contains: x}", "{regex: \"(unclosed\"}", 1), "does not compile"},
		{"unknown placeholder", strings.Replace(base, `"ok"`, `"hi {name}"`, 1), "placeholder {name} does not exist"},
		{"group placeholder ok only in its own entry", strings.Replace(base, "default: {content: d}", "default: {content: \"{city}\"}", 1), "placeholder {city}"},
		{"no default", strings.Replace(base, "default: {content: d}\n", "", 1), "default answer is required"},
		{"two answers", strings.Replace(base, `content: "ok"`, "content: ok\n    variants: [a]", 1), "exactly one of content"},
		{"two operators", strings.Replace(base, "{contains: x}", "{contains: x, exact: y}", 1), "exactly one of exact"},
		{"bad synthetic", strings.Replace(base, `content: "ok"`, "synthetic: {tokens: [9, 3]}", 1), "synthetic"},
		{"stray brace", strings.Replace(base, `"ok"`, `"a } b"`, 1), "stray }"},
	}
	for _, tc := range cases {
		_, err := content.ParseResponses("r.yml", []byte(tc.file))
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "r.yml") {
			t.Errorf("%s: error %q, want it to name r.yml and contain %q", tc.name, err, tc.want)
		}
	}
	// A named group is usable in its own entry.
	ok := strings.Replace(base, "{contains: x}", `{regex: "in (?P<city>\\w+)"}`, 1)
	ok = strings.Replace(ok, `"ok"`, `"sunny in {city}, {{braces}}"`, 1)
	r, err := content.ParseResponses("r.yml", []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := r.Generate(&GenRequest{Chat: true, Messages: []Message{{Role: "user", Text: "  Weather IN Oslo  "}}}, 1000)
	if got := strings.Join(p.Tokens, ""); got != "sunny in Oslo, {braces}" {
		t.Errorf("rendered %q", got)
	}
}

// presetModels builds a preset's models file from its spec text.
func presetModels(t *testing.T, text string) (*ModelsFile, error) {
	t.Helper()
	s, err := presets.ParseSpec(text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return PresetModels(s)
}

// TestPresetModels: every preset model builds on the GPUs it fits, and the
// Gemma-style model on an L40S keeps about a dozen 18,000-token calls warm
// (the sweep preset's premise).
func TestPresetModels(t *testing.T) {
	f, err := presetModels(t, "l40s/gemma-12b-hybrid")
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.SchedConfig(&f.Models[0])
	core := sched.New(cfg)
	calls := cfg.NumBlocks / core.BlocksFor(18000)
	if calls < 10 || calls > 16 {
		t.Errorf("an L40S holds %d warm 18,000-token calls, want about a dozen", calls)
	}
	for _, m := range presets.AllModels() {
		for _, gpu := range []string{"h200", "mi300x"} {
			if _, err := presetModels(t, gpu+"/"+m.Name); err != nil {
				t.Errorf("%s at its default TP on %s: %v", m.Name, gpu, err)
			}
		}
	}
	// 405 B in bf16 (812 GB) does not fit 8 × 80 GB; the error says so.
	if _, err := presetModels(t, "h100-80gbx8/llama-3.1-405b"); err == nil || !strings.Contains(err.Error(), "no block") {
		t.Errorf("405B bf16 on 8×H100: %v, want a no-room error", err)
	}
	if _, err := presetModels(t, "h100-80gbx8/llama-3.1-405b@fp8"); err != nil {
		t.Errorf("405B fp8 on 8×H100: %v", err)
	}
}

// TestKVDtypeAndReserve: an fp8 KV cache holds twice the tokens in the same
// memory. Llama 3.1 8B on one H100: (80 × 0.9 − 2) GiB − 16.06 GB =
// 59,101,927,680 bytes; a bf16 block (16 × 131,072 bytes) is 2,097,152:
// 28,181 blocks; fp8 blocks are half that: 56,363.
func TestKVDtypeAndReserve(t *testing.T) {
	for spec, want := range map[string]int{"h100-80gb/llama-3.1-8b": 28181, "h100-80gb/llama-3.1-8b@bf16,kv=fp8": 56363} {
		f, err := presetModels(t, spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.SchedConfig(&f.Models[0]).NumBlocks; got != want {
			t.Errorf("%s: %d blocks, want %d", spec, got, want)
		}
	}
	// fp8 weights halve the bytes each decode step reads and compute at
	// the fp8 peak: 1,979 TFLOPS on each of 2 H100s.
	f, _ := presetModels(t, "h100-80gbx2/llama-3.1-70b@fp8")
	c := f.SchedConfig(&f.Models[0]).Costs
	if c.DenseBytes != 70.6e9 || c.FLOPS != 2*1979e12 {
		t.Errorf("fp8 70B on 2×H100: %g weight bytes, %g FLOPS", c.DenseBytes, c.FLOPS)
	}
}

// TestBuiltinDefaultIsAPreset: the default target's model is exactly the
// preset h100-80gb/llama-3.1-8b under the name knee-sim, so a sweep of
// knee sim and a prediction of the preset are one machine.
func TestBuiltinDefaultIsAPreset(t *testing.T) {
	b, err := os.ReadFile("builtin/models.yml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseModels("builtin:models", b)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := presets.ParseSpec("h100-80gb/llama-3.1-8b")
	p, err := PresetModels(spec)
	if err != nil {
		t.Fatal(err)
	}
	got, want := f.Models[0], p.Models[0]
	got.Name, got.Preset = want.Name, ""
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(f.SchedConfig(&f.Models[0]), p.SchedConfig(&p.Models[0])) {
		t.Errorf("knee-sim is not the preset:\n%+v\n%+v", got, want)
	}
}

// TestPresetsSayWhatFits: a preset whose weights leave no KV cache names
// the smallest that fits (and fp8 on the same GPUs), and fp8 weights on a
// bf16 cache say what kv=fp8 would hold.
func TestPresetsSayWhatFits(t *testing.T) {
	spec, _ := presets.ParseSpec("h100-80gb/llama-3.1-405b")
	_, err := PresetModels(spec)
	if err == nil || !strings.Contains(err.Error(), "h200x8/llama-3.1-405b@bf16") || !strings.Contains(err.Error(), "h100-80gbx8/llama-3.1-405b@fp8") {
		t.Errorf("405B on H100s: %v", err)
	}
	fp8, _ := presets.ParseSpec("h100-80gbx4/llama-3.1-70b@fp8")
	kv := PresetKV(fp8)
	withKV, _ := presets.ParseSpec("h100-80gbx4/llama-3.1-70b@fp8,kv=fp8")
	if !strings.Contains(kv, "KV cache bf16") || !strings.Contains(kv, "kv=fp8") || blocks(withKV) < 2*blocks(fp8)-1 {
		t.Errorf("fp8 weights, bf16 cache: %q (kv=fp8: %d blocks against %d)", kv, blocks(withKV), blocks(fp8))
	}
	// vLLM checks its cache holds one request of the whole context, and
	// refuses to start otherwise: 8B's 131,072 tokens on a 24 GB L4.
	l4, _ := presets.ParseSpec("l4/llama-3.1-8b")
	if kv := PresetKV(l4); !strings.Contains(kv, "vLLM refuses to start this at the model's 131,072-token context: it starts with --max-model-len "+commas(16*blocks(l4))+" or less") {
		t.Errorf("L4 8B: %q", kv)
	}
	if strings.Contains(kv, "refuses") {
		t.Errorf("70B fp8 on four H100s holds its context: %q", kv)
	}
}
