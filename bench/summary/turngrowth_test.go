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

// TestIgnoredIgnoreEOSIsSaid: answers that asked for their whole
// max_tokens (ignore_eos) and ended sooner, as llama-server's
// /v1/messages answers do (it drops the field), are counted in a
// warning; answers cut at the budget, answers that called a tool and
// answers that never asked say nothing.
func TestIgnoredIgnoreEOSIsSaid(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  record.Record
		want string
	}{
		{"ended early", record.Record{IgnoreEOS: true, MaxTokens: 32, CompletionTokens: 27}, "3 of 3 answers ended before their max_tokens"},
		{"whole", record.Record{IgnoreEOS: true, MaxTokens: 32, CompletionTokens: 32}, ""},
		{"cut at the budget", record.Record{IgnoreEOS: true, MaxTokens: 32, CompletionTokens: 30, FinishLength: true}, ""},
		{"a tool call", record.Record{IgnoreEOS: true, MaxTokens: 32, CompletionTokens: 12, ToolFinish: true}, ""},
		{"not asked", record.Record{MaxTokens: 32, CompletionTokens: 27}, ""},
		{"a pooling model's", record.Record{IgnoreEOS: true, Pooled: true, MaxTokens: 128}, ""},
	} {
		s := New(Level{Load: driver.Load{Rate: 1, Duration: time.Second}, Config: results.Config{}}, 4)
		for i := range 3 {
			r := tc.rec
			due := time.Duration(i) * 10 * time.Millisecond
			r.Index, r.Scheduled, r.Sent, r.Done, r.Status, r.UsageReported = i, due, due, due+time.Millisecond, 200, true
			r.Chunks = r.CompletionTokens
			s.Add(&r)
		}
		res := s.Requests(health.Report{}, driver.Window{End: time.Second, SchedEnd: time.Second})
		got := strings.Join(res.Warnings, "|")
		if said := strings.Contains(got, "ignore_eos"); said != (tc.want != "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.want)
		}
	}
}
