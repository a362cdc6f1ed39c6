package results

import (
	"strings"
	"testing"
)

// TestDecodeRefusesImpossibleCounts: every command reading a result file
// refuses counts no run measures, as merge does: a report once drew a run
// of -5 requests that merge refused.
func TestDecodeRefusesImpossibleCounts(t *testing.T) {
	run := `{"schema_version":1,"requests":{"sent":3,"ok":-5},"window_s":1}`
	if _, err := DecodeRun("r.json", []byte(run)); err == nil || !strings.Contains(err.Error(), "requests.ok is -5") {
		t.Errorf("a run of -5 requests: %v", err)
	}
	sweep := `{"schema_version":1,"axis":"rate","levels":[{"load":1,"run":{"requests":{"ok":2}}},{"load":2,"run":{"tokens":{"output_total":-1}}}]}`
	if _, err := DecodeSweep("s.json", []byte(sweep)); err == nil || !strings.Contains(err.Error(), "levels[1] (load 2): tokens.output_total is -1") {
		t.Errorf("a sweep level of -1 tokens: %v", err)
	}
	ok := `{"schema_version":1,"requests":{"sent":3,"ok":3},"window_s":1}`
	if _, err := DecodeRun("r.json", []byte(ok)); err != nil {
		t.Errorf("a plausible run: %v", err)
	}
}
