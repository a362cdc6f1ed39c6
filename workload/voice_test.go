package workload

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestVoiceCallsAreDeterministic(t *testing.T) {
	v := DefaultVoice()
	v.SystemPromptTokens = 300
	a, b := v.Call(3), v.Call(3)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same call index gave different scripts")
	}
	v2 := v
	v2.Seed = 2
	if reflect.DeepEqual(a, v2.Call(3)) {
		t.Error("a different seed gave the same call")
	}
	for k := 1; k < v.Turns; k++ {
		if a.Gaps[k] < v.GapMin || a.Gaps[k] > v.GapMax {
			t.Errorf("gap %d = %v, want within [%v, %v]", k, a.Gaps[k], v.GapMin, v.GapMax)
		}
	}
}

// TestCallsShareNoLeadingBlock: two calls' system prompts differ within
// their first 16 characters, far inside any KV block.
func TestCallsShareNoLeadingBlock(t *testing.T) {
	v := DefaultVoice()
	v.SystemPromptTokens = 50
	seen := map[string]int{}
	for i := 0; i < 500; i++ {
		head := v.Call(i).System[:16]
		if j, ok := seen[head]; ok {
			t.Fatalf("calls %d and %d start alike: %q", j, i, head)
		}
		seen[head] = i
	}
}

func TestTurnHistory(t *testing.T) {
	v := DefaultVoice()
	v.SystemPromptTokens = 20
	c := v.Call(0)
	t1 := v.Turn(c, 1, nil)
	if len(t1.Messages) != 2 || t1.MaxTokens != 1 || t1.Tag != 1 || !t1.IgnoreEOS {
		t.Errorf("turn 1 = %+v, want [system, user] with max_tokens 1", t1)
	}
	t3 := v.Turn(c, 3, []string{"a1", "a2"})
	roles := []string{}
	for _, m := range t3.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,user,assistant,user" || t3.MaxTokens != 100 {
		t.Errorf("turn 3 roles %v max_tokens %d", roles, t3.MaxTokens)
	}
	if t3.Messages[2].Content != "a1" || t3.Messages[4].Content != "a2" || t3.Messages[0].Content != c.System {
		t.Error("turn 3 does not carry the history")
	}
	if t3.Messages[1].Content != t1.Messages[1].Content {
		t.Error("turn 1's user message changed in the history")
	}
}

func TestVoiceValidate(t *testing.T) {
	v := DefaultVoice()
	if err := v.Validate(); err != nil {
		t.Fatal(err)
	}
	v.Turns = 1
	v.GapMax = time.Second
	if v.Validate() == nil {
		t.Error("1 turn and gap max < min accepted")
	}
}
