package summary

import (
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/health"
)

// TestErrorsKeepTheServersWords: each error class keeps the first
// message the server gave, bounded, across the collector's shards; a
// class with no message keeps none.
func TestErrorsKeepTheServersWords(t *testing.T) {
	s := New(Level{Load: driver.Load{Rate: 10, Duration: time.Second}}, 4)
	long := strings.Repeat("x", 2*maxErrorText)
	for i, tc := range []struct{ class, msg string }{
		{"http_400:invalid_request_error", "The model m is not a multimodal model: it takes no images"},
		{"http_400:invalid_request_error", "a later sentence"},
		{"http_500:server_error", long},
		{record.ClassConnectionReset, ""},
	} {
		due := time.Duration(i) * 10 * time.Millisecond
		s.Add(&record.Record{Index: i, Scheduled: due, Sent: due, Done: due + time.Millisecond, Status: 400, Class: tc.class, Message: tc.msg})
	}
	res := s.Requests(health.Report{}, driver.Window{End: time.Second, SchedEnd: time.Second})
	got := res.Requests.ErrorMessages
	if got["http_400:invalid_request_error"] != "The model m is not a multimodal model: it takes no images" {
		t.Errorf("400's words: %q, want the first sentence given", got["http_400:invalid_request_error"])
	}
	if m := got["http_500:server_error"]; len(m) > maxErrorText+len("…") || !strings.HasSuffix(m, "…") {
		t.Errorf("a long message kept %d bytes, want at most %d and a mark it was cut", len(m), maxErrorText)
	}
	if _, ok := got[record.ClassConnectionReset]; ok || res.Requests.Errors[record.ClassConnectionReset] != 1 {
		t.Errorf("a class without words: %v, counts %v", got, res.Requests.Errors)
	}
}
