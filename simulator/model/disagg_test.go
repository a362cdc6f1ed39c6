package model

import (
	"strings"
	"testing"
)

func TestDisaggregatedModelsRefused(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"preset: l4/llama-3.1-8b\n    disaggregated: {prefill_replicas: 1, decode_replicas: 1, kv_link_gbps: 10}", "more memory"},
		{"preset: h100-80gb/llama-3.1-8b\n    disaggregated: {prefill_replicas: 0, decode_replicas: 1, kv_link_gbps: 10}", "each pool"},
		{"preset: h100-80gb/llama-3.1-8b\n    disaggregated: {prefill_replicas: 1, decode_replicas: 1, kv_link_gbps: .nan}", "kv_link_gbps .nan is not a finite number"},
		{"preset: h100-80gb/llama-3.1-8b\n    disaggregated: {prefill_replicas: 1, decode_replicas: 1, kv_link_gbps: 0}", "positive number"},
		{"preset: h100-80gb/llama-3.1-8b\n    disaggregated: {prefill_replicas: 1, decode_replicas: 1, kv_link_gbps: 10, routing: nearest}", "routing"},
		{"engine: instant\n    context_length: 4096\n    disaggregated: {prefill_replicas: 1, decode_replicas: 1, kv_link_gbps: 10}", "only a scheduler"},
		{"preset: h100-80gb/llama-3.1-8b\n    stream_interval: -2", "stream_interval"},
		{"engine: instant\n    context_length: 4096\n    stream_interval: 4", "stream_interval"},
	} {
		_, err := ParseModels("m.yml", []byte("models:\n  - name: x\n    "+c.body+"\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.body, err, c.want)
		}
	}
	f, err := ParseModels("m.yml", []byte("models:\n  - name: x\n    preset: h100-80gb/llama-3.1-8b\n    stream_interval: 4\n"+
		"    disaggregated: {prefill_replicas: 2, decode_replicas: 1, kv_link_gbps: 100}\n"))
	if err != nil {
		t.Fatal(err)
	}
	dc, ok := f.DisaggConfig(&f.Models[0], 7)
	if !ok || dc.PrefillReplicas != 2 || dc.LinkGbps != 100 || dc.Seed != 7 || dc.Decode.StreamInterval != 4 {
		t.Errorf("disaggregated config %+v, %v", dc, ok)
	}
}
