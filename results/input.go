package results

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxResultBytes bounds a result file read: a 64-shard sweep of twenty
// levels with every histogram is a few megabytes.
const MaxResultBytes = 256 << 20

// ErrInterrupted is returned when a signal ended the wait for an input.
var ErrInterrupted = errors.New("interrupted")

// ReadInput reads a whole input file of at most limit bytes: a larger one
// (or /dev/zero) is refused with a message rather than read until memory
// runs out, a folder is named as one, and the wait for a FIFO's writer
// ends when ctx does, as the first signal must end it.
func ReadInput(ctx context.Context, path string, limit int64) ([]byte, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a file", path)
	}
	f, err := openInterruptible(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(f, limit+1))
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("reading %s: %v", path, r.err)
		}
		if int64(len(r.b)) > limit {
			return nil, fmt.Errorf("%s is larger than %d MiB: not a file knee wrote", path, limit>>20)
		}
		return r.b, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("reading %s: %w", path, ErrInterrupted)
	}
}

// openInterruptible opens path for reading; opening a FIFO blocks until a
// writer opens it, so the open runs aside and ctx ending abandons it.
func openInterruptible(ctx context.Context, path string) (*os.File, error) {
	if st, err := os.Stat(path); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		return os.Open(path)
	}
	type result struct {
		f   *os.File
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := os.Open(path)
		done <- result{f, err}
	}()
	select {
	case r := <-done:
		return r.f, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.f != nil {
				r.f.Close()
			}
		}()
		return nil, fmt.Errorf("waiting for a writer on the FIFO %s: %w", path, ErrInterrupted)
	}
}
