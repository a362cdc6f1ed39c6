package server

import (
	"encoding/json"
	"strings"
	"testing"
)

const loraModels = `
hardware:
  gpu: {hbm_gib: 80, memory_bandwidth_gbps: 3350, peak_tflops: 989}
models:
  - name: base
    context_length: 32768
    engine: scheduler
    hardware: gpu
    weights: {parameters_billions: 8, bytes_per_parameter: 2}
    kv_cache: {bytes_per_token: 131072, block_size: 16, gpu_memory_utilization: 0.9}
    scheduler: {max_num_batched_tokens: 8192, max_num_seqs: 64}
    lora: {adapters: [tenant-a, tenant-b], max_loras: 1, adapter_megabytes: 84}
  - name: ranked
    context_length: 32768
    engine: instant
    scheduling_policy: priority
`

// TestLoRAAndPriorityAsVLLM: adapters are model names of their own, listed
// with their base as parent and answered under their own name; an unknown
// name is a 404; a priority is refused by a model that schedules first
// come first served (vLLM's message) and taken by one that schedules by
// priority; vllm:lora_requests_info publishes the slots.
func TestLoRAAndPriorityAsVLLM(t *testing.T) {
	t.Parallel()
	inBubble(t, testLoRAAndPriorityAsVLLM)
}

func testLoRAAndPriorityAsVLLM(t *testing.T) {
	ts := startSim(t, loraModels, "", "")
	_, b := get(t, ts.URL+"/v1/models")
	var list struct {
		Data []struct{ ID, Parent string }
	}
	if err := json.Unmarshal(b, &list); err != nil || len(list.Data) != 4 || list.Data[1].ID != "tenant-a" || list.Data[1].Parent != "base" || list.Data[3].Parent != "" {
		t.Fatalf("models: %s", b)
	}
	chat := func(model, extra string) (int, []byte) {
		return post(t, ts.URL+"/v1/chat/completions", `{"model":"`+model+`","messages":[{"role":"user","content":"hi there"}],"max_tokens":4`+extra+`}`)
	}
	if code, b := chat("tenant-b", ""); code != 200 || !strings.Contains(string(b), `"model":"tenant-b"`) {
		t.Errorf("an adapter: %d %s", code, b)
	}
	if code, b := chat("tenant-c", ""); code != 404 {
		t.Errorf("an unknown adapter: %d %s", code, b)
	}
	if code, b := chat("base", `,"priority":1`); code != 400 || !strings.Contains(string(b), "Priority scheduling is not enabled") {
		t.Errorf("a priority to a FCFS model: %d %s", code, b)
	}
	if code, b := chat("ranked", `,"priority":-3`); code != 200 {
		t.Errorf("a priority to a priority model: %d %s", code, b)
	}
	if _, m := get(t, ts.URL+"/metrics"); !strings.Contains(string(m), `vllm:lora_requests_info{max_lora="1"`) {
		t.Errorf("no vllm:lora_requests_info in /metrics")
	}
	for _, bad := range []string{
		strings.Replace(loraModels, "[tenant-a, tenant-b]", "[tenant-a, tenant-a]", 1),
		strings.Replace(loraModels, "[tenant-a, tenant-b]", "[tenant-a, base]", 1),
		strings.Replace(loraModels, "scheduling_policy: priority", "scheduling_policy: sjf", 1),
		strings.Replace(loraModels, ", adapter_megabytes: 84", ", max_cpu_loras: 0, max_loras: 2000", 1),
	} {
		if _, err := ParseModels("bad", []byte(bad)); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}
