package cmd

import (
	"strings"
	"testing"
)

// TestLoRACausesBesideClasses: two adapters sharing one slot make one
// class wait on the other; the result names, beside the classes, how
// often each class's adapter waited for the slot and how many adapters
// the server loaded, so a slow class is explained, not only measured.
func TestLoRACausesBesideClasses(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		dir := t.TempDir()
		url, _ := simOfModels(t, dir, "lora", "models:\n  - name: base\n    preset: h100-80gb/llama-3.1-8b\n    scheduling_policy: priority\n"+
			"    lora: {adapters: [chat-lora, batch-lora], max_loras: 1, max_cpu_loras: 2}\n")
		r, stdout := runOutput(t, "run", "--base-url", url, "--model", "base", "--mix", "../docs/examples/mix.yml",
			"--rate", "6", "--duration", "20s")
		l := r.Server.LoRA
		if l == nil || l.Loads == nil || *l.Loads < 2 || l.MaxLoRAs != 1 || l.WaitingSamples["chat-lora"]+l.WaitingSamples["batch-lora"] == 0 {
			t.Fatalf("LoRA account %+v\n%s", l, stdout)
		}
		t.Logf("loads %d, waits %v of %d samples", *l.Loads, l.WaitingSamples, l.Samples)
		if !strings.Contains(stdout, "(adapter chat-lora): its requests waited for a slot in") || !strings.Contains(stdout, "loaded into a slot over the window") {
			t.Errorf("no word beside the classes of why:\n%s", stdout)
		}
	})
}
