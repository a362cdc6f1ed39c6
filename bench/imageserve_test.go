package bench

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func writePNG(t *testing.T, path string) {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImageServeServesWhatWasChecked: --image-serve serves a dataset's
// image as it was checked: a file swapped since for a link to another
// file is refused (410), a link out of the folder is refused when the
// dataset is read, and a request under another Host is not answered.
func TestImageServeServesWhatWasChecked(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	writePNG(t, filepath.Join(dir, "a.png"))
	writePNG(t, filepath.Join(out, "outside.png"))
	if err := os.Symlink(filepath.Join(out, "outside.png"), filepath.Join(dir, "link.png")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	s := &imageServer{addr: "127.0.0.1:9", levels: nil, files: map[string]servedFile{}, hosts: map[string]bool{"127.0.0.1:9": true}}
	di := &datasetImages{ctx: context.Background(), cache: map[string]string{}, dir: dir, urlBase: "http://127.0.0.1:9", serve: s}
	if _, err := di.resolve("a.png"); err != nil {
		t.Fatal(err)
	}
	if _, err := di.resolve("link.png"); err == nil || !strings.Contains(err.Error(), "outside the image folder") {
		t.Errorf("a link out of the folder: %v", err)
	}
	get := func(host, name string) int {
		r := httptest.NewRequest(http.MethodGet, "http://"+host+"/"+name, nil)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code
	}
	if code := get("127.0.0.1:9", "a.png"); code != 200 {
		t.Errorf("the checked image: %d", code)
	}
	if code := get("evil.example:9", "a.png"); code != http.StatusMisdirectedRequest {
		t.Errorf("another Host: %d, want 421", code)
	}
	// Swapped for a link to a secret after the check.
	secret := filepath.Join(out, "secret")
	if err := os.WriteFile(secret, []byte("root:x:0:0"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "a.png"))
	if err := os.Symlink(secret, filepath.Join(dir, "a.png")); err != nil {
		t.Fatal(err)
	}
	if code := get("127.0.0.1:9", "a.png"); code != http.StatusGone {
		t.Errorf("a swapped file: %d, want 410", code)
	}
}

// discard is a ResponseWriter that keeps only how much was written.
type discard struct {
	h http.Header
	n int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }

// TestImageServeStreamsFiles (issue 56): a dataset's image is served
// through a buffer, not read whole a fetch (forty fetches of a 60 MiB
// image at once took over a gigabyte), and one rewritten in place since
// the check, its time set back, is cut off before its end.
func TestImageServeStreamsFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.png")
	writePNG(t, path)
	pad := make([]byte, 16<<20) // a PNG with 16 MiB after its end still reads as one
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(pad)
	f.Close()
	s := &imageServer{addr: "127.0.0.1:9", files: map[string]servedFile{}, hosts: map[string]bool{"127.0.0.1:9": true}}
	di := &datasetImages{ctx: context.Background(), cache: map[string]string{}, dir: dir, urlBase: "http://127.0.0.1:9", serve: s}
	if _, err := di.resolve("big.png"); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:9/big.png", nil)
	info, _ := os.Stat(path)
	// The least of three fetches: another goroutine's allocations may
	// land in one; reading the file whole lands in every one.
	least := uint64(math.MaxUint64)
	for range 3 {
		w := &discard{h: http.Header{}}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s.ServeHTTP(w, r)
		runtime.ReadMemStats(&after)
		if int64(w.n) != info.Size() {
			t.Fatalf("served %d bytes of %d", w.n, info.Size())
		}
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	if least > 2<<20 {
		t.Errorf("a fetch of a %d MiB file allocated %d KiB: read whole, not streamed", info.Size()>>20, least>>10)
	}
	head := &discard{h: http.Header{}}
	s.ServeHTTP(head, httptest.NewRequest(http.MethodHead, "http://127.0.0.1:9/big.png", nil))
	if head.n != 0 || head.h.Get("Content-Length") != fmt.Sprint(info.Size()) || head.h.Get("Content-Type") != "image/png" {
		t.Errorf("HEAD: %d bytes, headers %v", head.n, head.h)
	}
	// Rewritten in place, the same size, its time set back.
	g, _ := os.OpenFile(path, os.O_WRONLY, 0)
	g.WriteAt([]byte("root:x:0:0"), 8<<20)
	g.Close()
	os.Chtimes(path, info.ModTime(), info.ModTime())
	w := &discard{h: http.Header{}}
	func() {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Errorf("a file rewritten in place: %v, want the connection aborted", p)
			}
		}()
		s.ServeHTTP(w, r)
	}()
	if int64(w.n) >= info.Size() {
		t.Errorf("a file rewritten in place was served whole (%d bytes)", w.n)
	}
}
