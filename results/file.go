package results

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
)

// WriteJSON writes v as indented JSON (see WriteOutput).
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteOutput(path, append(b, '\n'))
}

// ReadRun reads a run written by knee run --output.
func ReadRun(path string) (*Run, error) {
	b, err := ReadInput(context.Background(), path, MaxResultBytes)
	if err != nil {
		return nil, err
	}
	return DecodeRun(path, b)
}

// DecodeRun is ReadRun of a file already read (see ReadInput).
func DecodeRun(path string, b []byte) (*Run, error) {
	var r Run
	if err := decodeVersioned(path, b, &r); err != nil {
		return nil, err
	}
	if err := isKind(path, b, RunKind); err != nil {
		return nil, err
	}
	if err := plausibleCounts(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

func decodeVersioned(path string, b []byte, v any) error {
	var head struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("%s: not a knee result file (damaged JSON: %v)", path, err)
	}
	if head.SchemaVersion == nil {
		return fmt.Errorf("%s: not a knee result file (no schema_version)", path)
	}
	if *head.SchemaVersion != SchemaVersion {
		return fmt.Errorf("%s: schema version %d, this knee reads version %d", path, *head.SchemaVersion, SchemaVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// IsSweep says whether a knee result file, already read, is a sweep rather
// than a run (KindOf). A plan or a calibration is neither, and an error
// naming it: read as a run, a plan once made compare draw an empty sweep.
func IsSweep(path string, b []byte) (bool, error) {
	kind, err := KindOf(path, b)
	switch {
	case err != nil:
		return false, err
	case kind == PlanKind || kind == CalibrationKind:
		return false, fmt.Errorf("%s is a %s file, not a run or a sweep", path, kind)
	}
	return kind == SweepKind, nil
}

// isKind refuses a file of another kind than want: Go's JSON ignores the
// keys it does not know, so a plan decodes as an empty run or sweep, and
// was once drawn as one.
func isKind(path string, b []byte, want string) error {
	kind, err := KindOf(path, b)
	if err == nil && kind != want {
		err = fmt.Errorf("%s is a %s file, not a %s", path, kind, want)
	}
	return err
}

// The kinds of result file (KindOf); a plan file says its own.
const (
	RunKind         = "run"
	SweepKind       = "sweep"
	CalibrationKind = "calibration"
)

// KindOf says what a result file holds by the keys that mark each kind:
// a plan's kind, a calibration's measured file, a sweep's levels; a run
// otherwise. Damaged JSON is an error naming the file.
func KindOf(path string, b []byte) (string, error) {
	var head struct {
		Kind     string          `json:"kind"`
		Measured json.RawMessage `json:"measured"`
		Levels   json.RawMessage `json:"levels"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return "", fmt.Errorf("%s: not a knee result file (damaged JSON: %v)", path, err)
	}
	switch {
	case head.Kind == PlanKind:
		return PlanKind, nil
	case head.Measured != nil:
		return CalibrationKind, nil
	case head.Levels != nil:
		return SweepKind, nil
	}
	return RunKind, nil
}

// DecodeSweepOrRun reads a sweep file, already read, or a run file as a
// sweep of one level (its load the run's rate or concurrency).
func DecodeSweepOrRun(path string, b []byte) (*Sweep, error) {
	sweep, err := IsSweep(path, b)
	if err != nil {
		return nil, err
	}
	if sweep {
		return DecodeSweep(path, b)
	}
	r, err := DecodeRun(path, b)
	if err != nil {
		return nil, err
	}
	s := &Sweep{SchemaVersion: r.SchemaVersion, Label: path, StartedAt: r.StartedAt, Config: r.Config, Environment: r.Environment,
		Workload: string(r.Config.Workload), Axis: "concurrency", Levels: []Level{{Load: float64(r.Config.Concurrency), Run: r}}}
	if r.Config.Mode == ModeOpen {
		s.Axis, s.Levels[0].Load = "rate", r.Config.Rate
	}
	return s, nil
}

// DecodeSweeps decodes every file as a sweep (DecodeSweep).
func DecodeSweeps(paths []string, files [][]byte) ([]*Sweep, error) {
	out := make([]*Sweep, len(paths))
	for i, p := range paths {
		s, err := DecodeSweep(p, files[i])
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// DecodeRuns decodes every file as a run (DecodeRun).
func DecodeRuns(paths []string, files [][]byte) ([]*Run, error) {
	out := make([]*Run, len(paths))
	for i, p := range paths {
		r, err := DecodeRun(p, files[i])
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}
