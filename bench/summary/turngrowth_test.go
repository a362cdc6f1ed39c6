package summary

import (
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
)

// TestTurnsThatDoNotGrowAreSaid: a server that drops a conversation's
// history (llm-d ignoring previous_response_id) answers later turns of
// 25 prompt tokens where the conversation holds hundreds; the result
// says how many later turns did not grow. Turns that grow say nothing.
func TestTurnsThatDoNotGrowAreSaid(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prompts []int
		want    string
	}{
		{"dropped", []int{289, 25, 25}, "4 of 4 later turns sent a prompt no larger"},
		{"kept", []int{289, 310, 325}, ""},
	} {
		s := New(Level{Load: driver.Load{Rate: 1, Duration: time.Second}, Config: results.Config{History: "server"}}, 4)
		for call := range 2 {
			for k, p := range tc.prompts {
				due := time.Duration(call*10+k) * 10 * time.Millisecond
				s.Add(&record.Record{Index: call*10 + k, Call: call, Tag: k + 2, Scheduled: due, Sent: due, Done: due + time.Millisecond,
					Status: 200, PromptTokens: p, UsageReported: true})
			}
		}
		res := s.Requests(health.Report{}, driver.Window{End: time.Second, SchedEnd: time.Second})
		got := strings.Join(res.Warnings, "|")
		want := tc.want
		if (want == "") != !strings.Contains(got, "later turns") || !strings.Contains(got, want) || (want != "" && !strings.Contains(got, "previous_response_id")) {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, want)
		}
	}
}
