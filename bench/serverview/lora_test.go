package serverview

import (
	"reflect"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestLoRAInfoSampled: vllm:lora_requests_info, as vLLM writes it (one
// series, the adapters comma-separated in its labels, the time as its
// value), sampled through a window: the slots, every adapter seen running
// or waiting, and the samples in which one waited.
func TestLoRAInfoSampled(t *testing.T) {
	var got *results.ServerLoRA
	for _, text := range []string{
		`vllm:lora_requests_info{max_lora="1",running_lora_adapters="chat",waiting_lora_adapters=""} 1.7e+09` + "\n",
		`vllm:lora_requests_info{max_lora="1",running_lora_adapters="batch",waiting_lora_adapters="chat,tenant-c"} 1.7e+09` + "\n",
		"# no LoRA series in this scrape\nvllm:num_requests_running 3\n",
	} {
		s, err := parseExposition([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		sampleLoRA(s, &got)
	}
	want := &results.ServerLoRA{MaxLoRAs: 1, Running: []string{"batch", "chat"}, Waiting: []string{"chat", "tenant-c"}, Samples: 2, SamplesWaiting: 1,
		WaitingSamples: map[string]int{"chat": 1, "tenant-c": 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
