package workload

import (
	"strings"
	"testing"
)

// TestGuideLLMTurnOutputs: a GuideLLM multi-turn row's numbered output
// counts are each turn's own; a turn without one takes the row's.
func TestGuideLLMTurnOutputs(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		want []int
	}{
		{"numbered", `{"prompt_0":"a","prompt_1":"b","output_tokens_count_0":11,"output_tokens_count_1":13}`, []int{11, 13}},
		{"row and one numbered", `{"prompt_0":"a","prompt_1":"b","output_tokens_count":7,"output_tokens_count_1":13}`, []int{7, 13}},
		{"row only", `{"prompt_0":"a","prompt_1":"b","output_tokens_count":7}`, []int{7, 7}},
	} {
		p, err := ParseDataset(strings.NewReader(tc.line+"\n"), FormatAuto)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(p.Conversations) != 1 || len(p.Conversations[0].Turns) != len(tc.want) {
			t.Fatalf("%s: %+v", tc.name, p.Conversations)
		}
		for k, w := range tc.want {
			if got := p.Conversations[0].Turns[k].MaxTokens; got != w {
				t.Errorf("%s: turn %d asks %d, want %d", tc.name, k, got, w)
			}
		}
	}
	if _, err := ParseDataset(strings.NewReader(`{"prompt_0":"a","prompt_1":"b","output_tokens_count_1":-3}`+"\n"), FormatAuto); err == nil {
		t.Error("a negative turn count was read")
	}
}
