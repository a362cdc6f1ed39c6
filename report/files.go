package report

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kneebench/knee/results"
)

// SweepFiles are where a sweep's files go, whether it was measured,
// predicted or merged: its JSON, CSV and PNG, and for a measured sweep
// the CSV of its levels' time slices (an empty path is not written).
type SweepFiles struct{ JSON, CSV, PNG, Slices string }

// WriteData writes the JSON and CSV, each atomically: a sweep's are
// rewritten after every level, so one cut short keeps what it measured.
func (f SweepFiles) WriteData(s *results.Sweep) error {
	if f.keepsOld(s) {
		return nil
	}
	if err := results.WriteJSON(f.JSON, s); err != nil {
		return fmt.Errorf("writing %s: %w", f.JSON, err)
	}
	if f.CSV == "" {
		return nil
	}
	b, err := s.CSV()
	if err != nil {
		return err
	}
	if err := results.WriteOutput(f.CSV, b); err != nil {
		return fmt.Errorf("writing %s: %w", f.CSV, err)
	}
	if f.Slices == "" {
		return nil
	}
	if b, err = s.SlicesCSV(); err != nil {
		return err
	}
	if err := results.WriteOutput(f.Slices, b); err != nil {
		return fmt.Errorf("writing %s: %w", f.Slices, err)
	}
	return nil
}

// Write writes every file and returns those written. A plot that cannot
// be drawn is no error: warning says why it is missing.
func (f SweepFiles) Write(s *results.Sweep) (written []string, warning string, err error) {
	if f.keepsOld(s) {
		return nil, fmt.Sprintf("kept %s: the sweep was stopped before it measured a request, and an empty result would replace it", f.JSON), nil
	}
	if err := f.WriteData(s); err != nil {
		return nil, "", err
	}
	written = []string{f.JSON}
	for _, p := range []string{f.CSV, f.Slices} {
		if p != "" {
			written = append(written, p)
		}
	}
	if f.PNG == "" {
		return written, "", nil
	}
	var png bytes.Buffer
	if err := SweepPlot(&png, s); err != nil {
		return written, fmt.Sprintf("the plot could not be drawn: %v", err), nil
	}
	if err := results.WriteOutput(f.PNG, png.Bytes()); err != nil {
		return written, "", err
	}
	return append(written, f.PNG), "", nil
}

// keepsOld says whether writing s would replace an existing result with a
// sweep stopped before it measured a request: the old files are kept (a
// Ctrl-C at once replaced the last sweep of that label with an empty one).
func (f SweepFiles) keepsOld(s *results.Sweep) bool {
	return s.MeasuredNothing() && results.HoldsResult(f.JSON)
}

// Listed says a list of files in words: "a", "a and b", "a, b and c".
func Listed(files []string) string {
	switch len(files) {
	case 0:
		return ""
	case 1:
		return files[0]
	}
	return strings.Join(files[:len(files)-1], ", ") + " and " + files[len(files)-1]
}

// Sizes states the prompt and output sizes of a workload, as a sweep's
// header gives them.
func Sizes(c results.Config) string {
	switch {
	case c.Mix != "":
		return c.Mix
	case c.Voice != nil:
		return fmt.Sprintf("%d-token system prompt, %d-token user turns, %d output tokens, %d turns", c.Voice.SystemPromptTokens, c.Voice.UserTokens, c.Voice.OutputTokens, c.Voice.Turns)
	case c.Dataset != "":
		return fmt.Sprintf("prompts from %s, max_tokens %d unless an entry says", c.Dataset, c.MaxTokens)
	case c.InputTokens > 0 && c.Pooled():
		return fmt.Sprintf("%d-token prompts, %s", c.InputTokens, pooledSize(c))
	case c.InputTokens > 0:
		return fmt.Sprintf("%d-token prompts, max_tokens %d", c.InputTokens, c.MaxTokens)
	}
	return fmt.Sprintf("a fixed prompt, max_tokens %d", c.MaxTokens)
}

// Window states a level's window: its duration, the whole trace, or a
// count of calls or requests.
func Window(d time.Duration, requests, calls int, workload string) string {
	switch {
	case d > 0:
		return d.String()
	case requests == 0 && workload == "requests":
		return "the whole trace"
	case workload == "voice":
		return results.Plural(calls, "call")
	}
	return results.Plural(requests, "request")
}

// Classify sorts result files by what they hold, for a page: plans,
// calibrations, sweeps and runs, each decoded; a file that is none of them
// is an error naming it.
// A file is sorted by the keys that mark its kind (results.KindOf), and
// a file of one kind that does not decode says why, rather than pass for
// another kind that holds nothing (a sweep with one bad field once made a
// page of an empty run).
func Classify(paths []string, files [][]byte) (HTMLInput, error) {
	var in HTMLInput
	for i, path := range paths {
		if err := in.add(path, files[i]); err != nil {
			return in, err
		}
	}
	return in, nil
}

func (in *HTMLInput) add(path string, b []byte) error {
	kind, err := results.KindOf(path, b)
	if err != nil {
		return err
	}
	switch kind {
	case results.PlanKind:
		return keep(&in.Plans)(results.DecodePlan(path, b))
	case results.CalibrationKind:
		return keep(&in.Calibrations)(results.DecodeCalibration(path, b))
	case results.SweepKind:
		return keep(&in.Sweeps)(results.DecodeSweep(path, b))
	}
	return keep(&in.Runs)(results.DecodeRun(path, b))
}

// keep appends what a decoder read to list, when it read it.
func keep[T any](list *[]*T) func(*T, error) error {
	return func(v *T, err error) error {
		if err == nil {
			*list = append(*list, v)
		}
		return err
	}
}

// UsageError is an error of the flags naming a command's files, as
// opposed to one making them.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// NewSweepFiles names a sweep's (or a prediction's, or a plan's) files in
// outDir, made now, so a folder that cannot be made fails before anything
// is measured: label.json, .csv and .png, label defaulting to kind and the
// time. A label is a file name, never a path. Errors of the flags are
// *UsageError.
func NewSweepFiles(outDir, label, kind string) (string, SweepFiles, error) {
	named := label != ""
	if !named {
		label = kind + "-" + time.Now().Format("20060102-150405")
	}
	if strings.ContainsAny(label, `/\`) {
		return "", SweepFiles{}, &UsageError{errors.New("--label must not contain a path separator")}
	}
	if outDir == "" || outDir == results.Stdout {
		return "", SweepFiles{}, &UsageError{fmt.Errorf("--out-dir is the folder the result files go in; %q is not one", outDir)}
	}
	if st, err := os.Stat(outDir); err == nil && !st.IsDir() {
		return "", SweepFiles{}, fmt.Errorf("--out-dir %s is a file, not a folder", outDir)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", SweepFiles{}, fmt.Errorf("--out-dir: %w", err)
	}
	if !named {
		label = freeLabel(outDir, label)
	}
	return label, sweepFiles(outDir, label), nil
}

func sweepFiles(outDir, label string) SweepFiles {
	return SweepFiles{JSON: filepath.Join(outDir, label+".json"), CSV: filepath.Join(outDir, label+".csv"), PNG: filepath.Join(outDir, label+".png")}
}

// freeLabel is label, or label-2, -3 and on when files of that name are
// already in outDir: a default name is the time to the second, and a loop
// of predictions makes several a second, each of which would replace the
// one before. (A label the user gives is theirs to reuse.)
func freeLabel(outDir, label string) string {
	taken := func(l string) bool {
		f := sweepFiles(outDir, l).WithSlices()
		for _, p := range []string{f.JSON, f.CSV, f.PNG, f.Slices} {
			if _, err := os.Lstat(p); err == nil {
				return true
			}
		}
		return false
	}
	free := label
	for i := 2; taken(free) && i <= 1000; i++ {
		free = fmt.Sprintf("%s-%d", label, i)
	}
	return free
}

// Outputs are the files by the flag that names them, for checking.
func (f SweepFiles) Outputs() map[string]string {
	out := map[string]string{"--out-dir (JSON)": f.JSON, "--out-dir (CSV)": f.CSV, "--out-dir (PNG)": f.PNG}
	if f.Slices != "" {
		out["--out-dir (slices CSV)"] = f.Slices
	}
	return out
}

// WithSlices names the slices CSV beside the CSV: label-slices.csv.
func (f SweepFiles) WithSlices() SweepFiles {
	if f.CSV != "" {
		f.Slices = strings.TrimSuffix(f.CSV, ".csv") + "-slices.csv"
	}
	return f
}
