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

// TestIsSweepRefusesOtherKinds: a plan or a calibration handed where a
// run or a sweep belongs is refused by its kind; read as a run, a plan
// once made compare draw an empty sweep.
func TestIsSweepRefusesOtherKinds(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{`{"schema_version":1,"kind":"plan","rows":[]}`, "p.json is a plan file, not a run or a sweep"},
		{`{"measured":"m.json","params":[],"levels":[]}`, "p.json is a calibration file, not a run or a sweep"},
	} {
		if _, err := IsSweep("p.json", []byte(tc.file)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.file, err, tc.want)
		}
	}
	plan := []byte(`{"schema_version":1,"kind":"plan","axis":"rate","rows":[]}`)
	if _, err := DecodeSweep("p.json", plan); err == nil || !strings.Contains(err.Error(), "p.json is a plan file, not a sweep") {
		t.Errorf("a plan decoded as a sweep: %v", err)
	}
	if _, err := DecodeRun("p.json", plan); err == nil || !strings.Contains(err.Error(), "p.json is a plan file, not a run") {
		t.Errorf("a plan decoded as a run: %v", err)
	}
	if s, err := IsSweep("s.json", []byte(`{"levels":[]}`)); !s || err != nil {
		t.Errorf("a sweep: %v, %v", s, err)
	}
	if s, err := IsSweep("r.json", []byte(`{"requests":{}}`)); s || err != nil {
		t.Errorf("a run: %v, %v", s, err)
	}
}
