package workload

import "testing"

// TestPrefixTrackerSeesTools: requests that offer the same tools share
// them, as a server that renders them first in the prompt does; a request
// without tools shares nothing with them.
func TestPrefixTrackerSeesTools(t *testing.T) {
	tr := NewPrefixTracker()
	tools := BuiltinTools()
	ask := func(text string, tools []Tool) float32 {
		return tr.Share(&Request{Messages: []Message{{Role: "user", Content: text}}, Tools: tools})
	}
	if s := ask("first question, quite unlike the second one", tools); s != 0 {
		t.Errorf("the first request shares %v", s)
	}
	if s := ask("another question entirely, sharing no words", tools); s < 0.5 {
		t.Errorf("a second request with the same tools shares %v; the tools are most of its prompt", s)
	}
	if s := ask("a third question with no tools at all here", nil); s != 0 {
		t.Errorf("a request without tools shares %v", s)
	}
}
