// Package input is the one reader of the files a user names: datasets,
// tokenizers, result files, records, prices, model tables. Every read is
// bounded in size, so /dev/zero or a mistaken multi-gigabyte file is
// refused with a message naming it instead of ending in an out-of-memory
// crash, and every wait is bounded by a context, so a FIFO whose writer
// never comes ends at the first signal instead of hanging the command.
//
// It imports nothing of knee: every other room reads its inputs through
// it.
package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrTooLarge is wrapped by the error for an input past its size limit.
var ErrTooLarge = errors.New("input too large")

// ErrInterrupted is wrapped by the error for an open or a read that the
// context ended (a signal while waiting on a FIFO's writer).
var ErrInterrupted = errors.New("interrupted while waiting for an input")

// ErrUnreadable is matched (errors.Is) by the error for an input that
// could not be opened: missing, not allowed, or a folder. Like a file too
// large, it is not a mistake in the flags' values but in the machine's
// files, whichever flag named it.
var ErrUnreadable = errors.New("input cannot be opened")

// Unreadable marks err, an input's that could not be found or opened, as
// ErrUnreadable, its words kept.
func Unreadable(err error) error { return unreadable{err} }

// unreadable keeps the system's words for an input that could not be
// opened, and matches ErrUnreadable.
type unreadable struct{ err error }

func (e unreadable) Error() string        { return e.err.Error() }
func (e unreadable) Unwrap() error        { return e.err }
func (e unreadable) Is(target error) bool { return target == ErrUnreadable }

// File is an open input: a reader that fails with ErrTooLarge once more
// than its limit has been read, and with ErrInterrupted once its context
// ends.
type File struct {
	f     *os.File
	ctx   context.Context
	stop  func() bool
	path  string
	what  string
	limit int64
	read  int64
}

// Open opens path for reading at most limit bytes; what names, for the
// error messages, what the file should be ("a dataset"). A regular file
// already larger than limit is refused before any byte is read; a
// directory is refused; an open that blocks (a FIFO without a writer)
// ends when ctx does.
func Open(ctx context.Context, path string, limit int64, what string) (*File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		// Opening a FIFO for reading blocks in the kernel until a
		// writer comes; the open runs apart so that ctx can end the wait.
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	var o opened
	select {
	case o = <-done:
	case <-ctx.Done():
		go func() {
			// Close the file if the writer ever comes.
			if late := <-done; late.f != nil {
				late.f.Close()
			}
		}()
		return nil, fmt.Errorf("%s: %w", path, ErrInterrupted)
	}
	if o.err != nil {
		return nil, unreadable{o.err}
	}
	info, err := o.f.Stat()
	if err != nil {
		o.f.Close()
		return nil, unreadable{err}
	}
	if info.IsDir() {
		o.f.Close()
		return nil, unreadable{fmt.Errorf("%s is a folder, not %s", path, what)}
	}
	if info.Mode().IsRegular() && info.Size() > limit {
		o.f.Close()
		return nil, tooLarge(path, what, limit)
	}
	in := &File{f: o.f, ctx: ctx, path: path, what: what, limit: limit}
	// Closing a pipe or FIFO ends a Read blocked on it (Go polls them).
	in.stop = context.AfterFunc(ctx, func() { o.f.Close() })
	return in, nil
}

// Read reads from the file, failing once more than the limit was read or
// once the context ended.
func (in *File) Read(p []byte) (int, error) {
	if in.ctx.Err() != nil {
		return 0, fmt.Errorf("%s: %w", in.path, ErrInterrupted)
	}
	// Read one byte past the limit at most, so that a file of exactly
	// limit bytes passes and one byte more fails.
	if room := in.limit + 1 - in.read; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := in.f.Read(p)
	in.read += int64(n)
	if in.read > in.limit {
		return n, tooLarge(in.path, in.what, in.limit)
	}
	if err != nil && err != io.EOF && in.ctx.Err() != nil {
		return n, fmt.Errorf("%s: %w", in.path, ErrInterrupted)
	}
	return n, err
}

// Stat is the open file's own description: the file read, whatever its
// path names by now.
func (in *File) Stat() (os.FileInfo, error) { return in.f.Stat() }

// Close closes the file.
func (in *File) Close() error {
	if in.stop != nil && !in.stop() {
		// The context already closed it.
		return nil
	}
	return in.f.Close()
}

// Read reads the whole of path, at most limit bytes (see Open).
func Read(ctx context.Context, path string, limit int64, what string) ([]byte, error) {
	f, err := Open(ctx, path, limit, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func tooLarge(path, what string, limit int64) error {
	return fmt.Errorf("%s is larger than %s, more than %s can be: %w", path, size(limit), what, ErrTooLarge)
}

// size writes a byte count the way a person would say it.
func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
