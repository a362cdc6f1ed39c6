package results

import (
	"bytes"
	"math"
	"testing"
)

// FuzzParseBounds: --slo is typed by hand. Whatever it holds, it parses
// to bounds or an error, never a panic; what it accepts is finite and
// within its ranges, and writes back as text that parses to the same.
func FuzzParseBounds(f *testing.F) {
	for _, s := range []string{"ttft.p95:500", "ttft_p95:500,tpot.p50:50", "goodput:90,e2e_sched.p99.9:4000",
		"ttft.p100:1", "ttft.pNaN:1", "ttft.p95:NaN", "ttft.p95:1e400", ",,", "throughput:5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bounds, good, err := ParseBounds(s)
		if err != nil {
			return
		}
		if !(good >= 0 && good <= 100) {
			t.Fatalf("%q: goodput share %v", s, good)
		}
		for _, b := range bounds {
			if !(b.Ms > 0 && b.Ms <= maxBoundMs) || !(b.Percentile > 0 && b.Percentile <= 100) {
				t.Fatalf("%q: bound %+v", s, b)
			}
			again, _, err := ParseBounds(b.String())
			if err != nil || len(again) != 1 || again[0] != b {
				t.Fatalf("%q: %+v writes as %q, which reads %+v, %v", s, b, b.String(), again, err)
			}
		}
	})
}

// FuzzParseMeasure: a --gate figure or a compare measure, typed by hand.
func FuzzParseMeasure(f *testing.F) {
	for _, s := range []string{"ttft_sched.p95", "ttft_p95", "throughput", "itl.p99.9", "tpot.p0", "x.p95", ".p"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMeasure(s)
		if err != nil {
			return
		}
		if math.IsNaN(m.Pct) || m.Pct < 0 || m.Pct > 100 {
			t.Fatalf("%q: percentile %v", s, m.Pct)
		}
	})
}

// FuzzReadRecords: a --records file handed to knee report may be cut,
// edited or another program's; reading it ends in lines or an error.
func FuzzReadRecords(f *testing.F) {
	f.Add([]byte(`{"level":2,"ok":true,"ttft_ms":12.5}` + "\n" + `{"repeat":1}`))
	f.Add([]byte("{}\n\n{\"level\":1e400}\n"))
	f.Add([]byte("not json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := ReadRecords(bytes.NewReader(data))
		if err == nil && len(lines) > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d records from %d lines", len(lines), bytes.Count(data, []byte("\n"))+1)
		}
	})
}
