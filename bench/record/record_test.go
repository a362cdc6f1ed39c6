package record

import (
	"bytes"
	"testing"
	"time"

	"github.com/kneebench/knee/results"
)

// TestRecordsRoundTrip: a record written by --records reads back with
// absolute Unix-nanosecond instants and the durations computed from them,
// all in one unit.
func TestRecordsRoundTrip(t *testing.T) {
	start := time.Unix(1_800_000_000, 500)
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	rec := &Record{Index: 7, Tag: 2, Scheduled: ms(10), Sent: ms(12), FirstToken: ms(60), LastToken: ms(100), Done: ms(101),
		Lateness: ms(1), Status: 200, Chunks: 3, PromptTokens: 50, CompletionTokens: 3, UsageReported: true,
		ChunkTimes: []time.Duration{ms(60), ms(80), ms(100)}}
	failed := &Record{Index: 8, Scheduled: ms(20), Sent: ms(20), Done: ms(25), Status: 503, Class: "http_503:server_error", Message: "busy"}
	var buf bytes.Buffer
	level := 4.0
	w := NewWriter(&buf, start, &level)
	w.Write(rec)
	w.Write(failed)
	w.Flush()
	lines, err := results.ReadRecords(&buf)
	if err != nil || len(lines) != 2 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	l := lines[0]
	base := start.UnixNano()
	if l.Level == nil || *l.Level != 4 || l.Index != 7 || l.Turn != 2 || l.ScheduledUnixNs != base+10e6 || l.SentUnixNs != base+12e6 ||
		l.FirstTokenUnixNs != base+60e6 || l.DoneUnixNs != base+101e6 || *l.TTFTNs != 48e6 || *l.TTFTSchedNs != 50e6 ||
		*l.E2ENs != 88e6 || l.QueueWaitNs != 2e6 || l.OutputTokens != 3 || len(l.ChunkUnixNs) != 3 || l.ChunkUnixNs[2] != base+100e6 {
		t.Errorf("record read back as %+v", l)
	}
	f := lines[1]
	if f.Error != "http_503:server_error" || f.Message != "busy" || f.TTFTNs != nil || f.FirstTokenUnixNs != 0 {
		t.Errorf("failed record read back as %+v", f)
	}
}
