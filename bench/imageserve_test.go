package bench

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
