package input

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadBoundsSize(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name    string
		path    string
		wantErr error
		wantLen int
		inError string
	}{
		{"under the limit", write("small", 10), nil, 10, ""},
		{"exactly the limit", write("exact", 16), nil, 16, ""},
		{"one byte over", write("over", 17), ErrTooLarge, 0, "larger than 16 bytes"},
		{"endless device", "/dev/zero", ErrTooLarge, 0, "/dev/zero"},
		{"a folder", dir, nil, 0, "is a folder, not a test file"},
		{"missing", filepath.Join(dir, "none"), os.ErrNotExist, 0, "none"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := Read(context.Background(), c.path, 16, "a test file")
			if c.inError == "" {
				if err != nil || len(b) != c.wantLen {
					t.Fatalf("got %d bytes, %v; want %d bytes", len(b), err, c.wantLen)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.inError) {
				t.Fatalf("error %v, want one containing %q", err, c.inError)
			}
			if c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Errorf("error %v does not wrap %v", err, c.wantErr)
			}
		})
	}
}

// A FIFO whose writer never comes blocks the open in the kernel; the
// context ends the wait. One whose writer opens and then stays silent
// blocks the read; the context ends that too.
func TestContextEndsWaits(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := Read(ctx, fifo, 1<<10, "a test file"); !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), fifo) {
		t.Fatalf("open of a FIFO without a writer: %v, want ErrInterrupted naming it", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	writerOpen := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			writerOpen <- nil
			return
		}
		writerOpen <- w
	}()
	f, err := Open(ctx, fifo, 1<<10, "a test file")
	if err != nil {
		t.Fatal(err)
	}
	w := <-writerOpen
	if w == nil {
		t.Fatal("the writer could not open the FIFO")
	}
	defer w.Close()
	time.AfterFunc(50*time.Millisecond, cancel)
	buf := make([]byte, 8)
	if _, err := f.Read(buf); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("read of a silent FIFO: %v, want ErrInterrupted", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("close after the context ended: %v", err)
	}
}
