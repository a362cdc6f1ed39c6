package results

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Stdout is the output path that means standard output.
const Stdout = "-"

// FileMode is the mode of result files knee creates: readable by the
// group and others, as results are meant to be shared.
const FileMode fs.FileMode = 0o644

// resolve follows symlinks to the file a path finally names, which may not
// exist yet (a dangling link names the file to create).
func resolve(path string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
			// Not there yet; whether it can be made is checked later.
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// CheckOutput says, before anything is measured, whether knee will be able
// to write path: "-" (standard output), an existing file, device, FIFO or
// socket it may write, or a new file in a folder it may create and write.
// A folder is refused, since a run would be measured and then lost.
func CheckOutput(path string) error {
	if path == Stdout {
		return nil
	}
	if path == "" {
		return errors.New("an empty output path")
	}
	real, err := resolve(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(real)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("%s is a folder; give a file name", path)
	case err == nil && fi.Mode().IsRegular():
		if err := unix.Access(real, unix.W_OK); err != nil {
			return fmt.Errorf("%s is not writable: %v", path, err)
		}
		return writableDir(filepath.Dir(real), path)
	case err == nil:
		// A device, FIFO or socket is written in place.
		if err := unix.Access(real, unix.W_OK); err != nil {
			return fmt.Errorf("%s is not writable: %v", path, err)
		}
		return nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, unix.ENOTDIR):
		return writableDir(filepath.Dir(real), path)
	}
	return err
}

// writableDir checks that dir exists and is writable, or can be created
// under its nearest existing ancestor.
func writableDir(dir, path string) error {
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
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, unix.ENOTDIR) || filepath.Dir(d) == d {
			return fmt.Errorf("cannot create %s: %v", path, err)
		}
	}
}

// WriteOutput writes data to the place path names without ever replacing
// what the user pointed at: "-" is standard output; a device, FIFO or
// socket is written in place; a symlink is followed and its target
// replaced atomically (temporary file and rename in the target's folder),
// so the link stays a link; a regular file, or a new one, is replaced
// atomically too, keeping an existing file's mode.
func WriteOutput(path string, data []byte) error {
	if path == Stdout {
		return writeAll(os.Stdout, data)
	}
	real, err := resolve(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(real)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("%s is a folder", path)
	case err == nil && !fi.Mode().IsRegular():
		f, err := os.OpenFile(real, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if err := writeAll(f, data); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	case err == nil:
		return replaceAtomic(real, data, fi.Mode().Perm())
	case errors.Is(err, fs.ErrNotExist):
		return replaceAtomic(real, data, FileMode)
	}
	return err
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

// OpenStream opens path for a stream of lines (--records): "-" is standard
// output, a device or FIFO is opened in place, and a regular file (through
// any symlink) is truncated or created with FileMode.
func OpenStream(path string) (io.WriteCloser, error) {
	if path == Stdout {
		return nopCloser{os.Stdout}, nil
	}
	real, err := resolve(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(real); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return nil, fmt.Errorf("%s is a folder", path)
		}
		return os.OpenFile(real, os.O_WRONLY, 0)
	}
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(real, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, FileMode)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
