package results

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Stdout is the output path that means standard output.
const Stdout = "-"

// FileMode is the mode of result files knee creates: readable by the
// group and others, as results are meant to be shared.
const FileMode fs.FileMode = 0o644

// A target is what an output path finally names.
type target struct {
	kind targetKind
	// path is the file the path finally names (symlinks followed).
	path string
	// fd is the open descriptor an alias names (kindFD).
	fd   int
	mode fs.FileMode
}

type targetKind int

const (
	kindStdout  targetKind = iota // "-"
	kindFD                        // /dev/stdout, /dev/fd/N, /proc/self/fd/N: a descriptor this process holds
	kindInPlace                   // a device, FIFO or socket: written where it is
	kindRegular                   // an existing regular file: replaced atomically
	kindNew                       // a file to create
)

// fdAlias says whether path names one of this process's open descriptors:
// /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N or
// /proc/<this pid>/fd/N. Such a path must be written through the
// descriptor: resolved by its text it names a pipe no one can open, and a
// file the shell opened for appending would be replaced.
func fdAlias(path string) (int, bool) {
	switch path = filepath.Clean(path); path {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, prefix := range []string{"/dev/fd/", "/proc/self/fd/", fmt.Sprintf("/proc/%d/fd/", os.Getpid())} {
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// classify follows path's symlinks to what it finally names.
func classify(path string) (target, error) {
	if path == Stdout {
		return target{kind: kindStdout, fd: 1}, nil
	}
	for range 40 {
		if fd, ok := fdAlias(path); ok {
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil {
				return target{}, fmt.Errorf("%s names descriptor %d, which is not open", path, fd)
			}
			return target{kind: kindFD, path: path, fd: fd}, nil
		}
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
			return target{kind: kindNew, path: path}, nil
		}
		if err != nil {
			return target{}, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			link, err := os.Readlink(path)
			if err != nil {
				return target{}, err
			}
			if !filepath.IsAbs(link) {
				link = filepath.Join(filepath.Dir(path), link)
			}
			path = link
			continue
		}
		switch {
		case fi.IsDir():
			return target{}, fmt.Errorf("%s is a folder; give a file name", path)
		case fi.Mode().IsRegular():
			return target{kind: kindRegular, path: path, mode: fi.Mode().Perm()}, nil
		}
		return target{kind: kindInPlace, path: path}, nil
	}
	return target{}, fmt.Errorf("%s: too many levels of symbolic links", path)
}

// CheckOutput says, before anything is measured, whether knee will be able
// to write path: "-" (standard output), an open descriptor, an existing
// file, device, FIFO or socket it may write, or a new file in an existing
// folder it may write. A folder is refused, since a run would be measured
// and then lost; so is a new file in a folder that does not exist (a
// careful tool does not create folders it was not asked to).
func CheckOutput(path string) error {
	return checkOutput(path, false)
}

// CheckOutputIn is CheckOutput for a file in a folder knee may create
// (--out-dir).
func CheckOutputIn(path string) error {
	return checkOutput(path, true)
}

func checkOutput(path string, mkdir bool) error {
	if path == "" {
		return errors.New("an empty output path")
	}
	t, err := classify(path)
	if err != nil {
		return err
	}
	switch t.kind {
	case kindStdout, kindFD:
		return nil
	case kindRegular, kindInPlace:
		if err := unix.Access(t.path, unix.W_OK); err != nil {
			return fmt.Errorf("%s is not writable: %v", path, err)
		}
		if t.kind == kindRegular {
			return writableDir(filepath.Dir(t.path), path, false)
		}
		return nil
	}
	return writableDir(filepath.Dir(t.path), path, mkdir)
}

// writableDir checks that dir exists and is writable or, when mkdir
// allows, can be created under its nearest existing ancestor.
func writableDir(dir, path string, mkdir bool) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("cannot create %s: %s is not a folder", path, d)
			}
			if err := unix.Access(d, unix.W_OK|unix.X_OK); err != nil {
				return fmt.Errorf("cannot create %s: folder %s is not writable", path, d)
			}
			return nil
		}
		if !mkdir {
			return fmt.Errorf("cannot create %s: folder %s does not exist", path, dir)
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, unix.ENOTDIR) || filepath.Dir(d) == d {
			return fmt.Errorf("cannot create %s: %v", path, err)
		}
	}
}

// Replaceable says whether path names a file knee writes whole (a regular
// file, or a new one), beside which companion files (a sweep's CSV and
// PNG) make sense; standard output, a descriptor or a device take one
// stream.
func Replaceable(path string) bool {
	t, err := classify(path)
	return err == nil && (t.kind == kindRegular || t.kind == kindNew)
}

// WriteOutput writes data to the place path names without ever replacing
// or truncating what it did not create: "-" is standard output; an alias
// of an open descriptor (/dev/stdout, /dev/fd/3, /proc/self/fd/1) is
// written through that descriptor, so a file the shell opened for
// appending is appended to; a device, FIFO or socket is written in place;
// a symlink is followed and its target replaced atomically (temporary
// file and rename in the target's folder), so the link stays a link; a
// regular file, or a new one, is replaced atomically too, keeping an
// existing file's mode. Folders are created only where the caller
// checked with CheckOutputIn.
func WriteOutput(path string, data []byte) error {
	t, err := classify(path)
	if err != nil {
		return err
	}
	switch t.kind {
	case kindStdout:
		return writeAll(os.Stdout, data)
	case kindFD:
		return writeAll(fdWriter(t.fd), data)
	case kindInPlace:
		f, err := os.OpenFile(t.path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if err := writeAll(f, data); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	case kindRegular:
		return replaceAtomic(t.path, data, t.mode)
	}
	return replaceAtomic(t.path, data, FileMode)
}

// fdWriter writes to descriptor fd without ever closing it.
func fdWriter(fd int) io.Writer {
	switch fd {
	case 1:
		return os.Stdout
	case 2:
		return os.Stderr
	}
	return rawFD(fd)
}

type rawFD int

func (r rawFD) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Write(int(r), p[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		n += m
	}
	return n, nil
}

func writeAll(w io.Writer, data []byte) error {
	_, err := w.Write(data)
	return err
}

// replaceAtomic writes data to path through a temporary file in the same
// folder and a rename, so a reader never sees half a file and an
// interrupted write leaves the previous file intact.
func replaceAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// OpenStream opens path for a stream of lines (--records): "-" is
// standard output, a descriptor's alias is written through it (appending
// where the shell opened it so), a device or FIFO is opened in place, and a
// regular file (through any symlink) is truncated or created with
// FileMode: the user named it as the output.
func OpenStream(path string) (io.WriteCloser, error) {
	return OpenStreamContext(context.Background(), path)
}

// OpenStreamContext is OpenStream whose wait for a FIFO's reader ends
// when ctx does.
func OpenStreamContext(ctx context.Context, path string) (io.WriteCloser, error) {
	t, err := classify(path)
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case kindStdout:
		return nopCloser{os.Stdout}, nil
	case kindFD:
		return nopCloser{fdWriter(t.fd)}, nil
	case kindInPlace:
		return openWriterInterruptible(ctx, t.path)
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(t.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, FileMode)
}

// openWriterInterruptible opens a device or FIFO for writing; a FIFO's
// open waits for a reader, so it runs aside and ctx ending abandons it.
func openWriterInterruptible(ctx context.Context, path string) (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
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
		return nil, fmt.Errorf("waiting for a reader on %s: %w", path, ErrInterrupted)
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// HoldsResult says whether path is a file with something in it: what a
// result of nothing (a run or sweep stopped before it measured a request)
// must not replace.
func HoldsResult(path string) bool {
	if IsStdout(path) {
		return false
	}
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Size() > 0
}

// IsStdout says whether path writes to standard output: "-", or a name
// of the descriptor standard output is.
func IsStdout(path string) bool {
	return path == Stdout || path != "" && SamePlace(path, Stdout)
}

// SamePlace says whether two paths name the same file, as far as can be
// told before either is written: the same existing file (through links,
// hard links, or a descriptor's alias), or the same path not yet created.
func SamePlace(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ta, errA := classify(a)
	tb, errB := classify(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	ia, okA := identity(ta)
	ib, okB := identity(tb)
	if okA && okB {
		return ia == ib
	}
	if ta.kind == kindNew && tb.kind == kindNew {
		pa, _ := filepath.Abs(ta.path)
		pb, _ := filepath.Abs(tb.path)
		return pa == pb
	}
	return false
}

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

// identity is what an existing target is.
func identity(t target) (fileID, bool) {
	var st unix.Stat_t
	var err error
	switch t.kind {
	case kindStdout, kindFD:
		err = unix.Fstat(t.fd, &st)
	case kindRegular, kindInPlace:
		err = unix.Stat(t.path, &st)
	default:
		return fileID{}, false
	}
	if err != nil {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}
