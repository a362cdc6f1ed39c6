package results

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// SameFileError is two paths a command was given that name one file:
// the user's to fix, before anything is measured.
type SameFileError struct{ msg string }

func (e *SameFileError) Error() string { return e.msg }

// CheckIO checks every output path a command was given (flag name →
// path; empty paths are skipped) before anything is measured: each can be
// written (CheckOutput; CheckOutputIn for a name with "out-dir" in it, a
// file in a folder knee may create), no two name the same file, and none
// names one of the inputs (flag or argument name → path), which writing
// it would destroy. Two paths naming one file give a *SameFileError.
func CheckIO(outputs, inputs map[string]string) error {
	outs := slices.Sorted(maps.Keys(outputs))
	for i, flag := range outs {
		p := outputs[flag]
		if p == "" {
			continue
		}
		check := CheckOutput
		if strings.Contains(flag, "out-dir") {
			check = CheckOutputIn
		}
		if err := check(p); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
		for _, other := range outs[i+1:] {
			if q := outputs[other]; SamePlace(p, q) {
				return &SameFileError{fmt.Sprintf("%s %s and %s %s name the same file: one would overwrite the other", flag, p, other, q)}
			}
		}
		for _, in := range slices.Sorted(maps.Keys(inputs)) {
			if q := inputs[in]; SamePlace(p, q) {
				return &SameFileError{fmt.Sprintf("%s %s is also %s: writing it would destroy what knee reads", flag, p, in)}
			}
		}
	}
	return nil
}

// CheckedWriter remembers the first write error of a stream, so a full
// disk or a closed pipe under --records ends the command in an error
// instead of losing records silently. Its zero value writes nothing.
type CheckedWriter struct {
	w      io.WriteCloser
	path   string
	err    error
	closed bool
}

// NewCheckedWriter watches w, the stream of path.
func NewCheckedWriter(w io.WriteCloser, path string) *CheckedWriter {
	return &CheckedWriter{w: w, path: path}
}

func (c *CheckedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = fmt.Errorf("writing %s: %w", c.path, err)
	}
	return n, err
}

// Open says the writer has a stream.
func (c *CheckedWriter) Open() bool { return c.w != nil }

// Close closes the stream once and returns the first error of its life.
func (c *CheckedWriter) Close() error {
	if c.w == nil {
		return nil
	}
	if !c.closed {
		c.closed = true
		if err := c.w.Close(); err != nil && c.err == nil {
			c.err = fmt.Errorf("closing %s: %w", c.path, err)
		}
	}
	return c.err
}

// OpenRecords opens a --records file (path, or "-" for stdout) as a
// stream that remembers its first write error; with no path it writes
// nothing. Cancelling ctx stops waiting on a FIFO's reader.
func OpenRecords(ctx context.Context, path string, stdout io.Writer) (*CheckedWriter, error) {
	if path == "" {
		return &CheckedWriter{}, nil
	}
	var f io.WriteCloser = nopCloser{stdout}
	if path != Stdout {
		var err error
		if f, err = OpenStreamContext(ctx, path); err != nil {
			return nil, fmt.Errorf("--records %s: %w", path, err)
		}
	}
	return NewCheckedWriter(f, path), nil
}

// ReadInputs reads result files, each bounded by MaxResultBytes;
// cancelling ctx stops waiting on a FIFO at once.
func ReadInputs(ctx context.Context, paths []string) ([][]byte, error) {
	out := make([][]byte, len(paths))
	for i, p := range paths {
		b, err := ReadInput(ctx, p, MaxResultBytes)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// WriteJSONTo writes v to path as WriteJSON does, or to stdout for "-".
func WriteJSONTo(path string, stdout io.Writer, v any) error {
	if path != Stdout {
		return WriteJSON(path, v)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = stdout.Write(append(b, '\n'))
	return err
}
