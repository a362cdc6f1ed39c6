package results

import (
	"strings"
	"testing"
)

// TestJudgeTools: tools offered and never called is said; a call
// required (tool_choice required or a tool's name) and not made is
// counted and warned of; no tools offered, nothing is said.
func TestJudgeTools(t *testing.T) {
	for _, tc := range []struct {
		name          string
		tools, choice string
		ok, called    int64
		notCalled     int64
		warn, note    string
	}{
		{"required, none called", "builtin", "required", 12, 0, 12, "12 of 12 answers called no tool", ""},
		{"named, some called", "builtin", "get_weather", 10, 7, 3, "3 of 10 answers called no tool", ""},
		{"auto, none called", "builtin", "auto", 5, 0, 0, "", "none called one"},
		{"auto, called", "builtin", "", 5, 5, 0, "", ""},
		{"none", "builtin", "none", 5, 0, 0, "", ""},
		{"no tools", "", "", 5, 0, 0, "", ""},
	} {
		r := &Run{Config: Config{Tools: tc.tools, ToolChoice: tc.choice}, Requests: Requests{OK: tc.ok}}
		if tc.called > 0 {
			r.ToolCalls = &ToolCalls{Requests: tc.called}
		}
		r.JudgeTools()
		got := int64(0)
		if r.ToolCalls != nil {
			got = r.ToolCalls.RequiredNotCalled
		}
		warn, note := strings.Join(r.Warnings, "|"), strings.Join(r.Notes, "|")
		if got != tc.notCalled || (tc.warn == "") != (warn == "") || !strings.Contains(warn, tc.warn) || (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
			t.Errorf("%s: not called %d, warnings %q, notes %q", tc.name, got, warn, note)
		}
		if tc.tools != "" && (r.ToolCalls == nil || r.ToolCalls.Offered != tc.ok) {
			t.Errorf("%s: offered %+v, want %d", tc.name, r.ToolCalls, tc.ok)
		}
	}
}

// TestClassCountsChecked: a mix class's counts are checked as the run's
// are: merge and every reader refuse a class that sent -4 requests.
func TestClassCountsChecked(t *testing.T) {
	r := &Run{Classes: map[string]*Run{"chat": {Requests: Requests{Sent: -4}}}}
	if err := plausibleCounts(r); err == nil || !strings.Contains(err.Error(), "classes.chat: requests.sent is -4") {
		t.Errorf("got %v", err)
	}
}
