package bench

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/workload"
)

// imageDir is a folder holding one 8×8 PNG, a.png.
func imageDir(t testing.TB) string {
	dir := t.TempDir()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.png"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// FuzzImageDataset: whatever a dataset file says of its images, reading
// it ends in entries whose every image is one knee can send (a data URL
// of an image, an http(s) or file:// URL, a local image it checked), or
// in an error; never a panic.
func FuzzImageDataset(f *testing.F) {
	for _, s := range []string{
		`[{"image":"a.png","conversations":[{"from":"human","value":"<image>\nq"},{"from":"gpt","value":"r"}]}]`,
		`{"text":"t","images":["a.png",{"url":"http://h/x.png"},{"path":"a.png"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"q"},{"type":"image_url","image_url":{"url":"file:///x.png"}}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo="}]}]}`,
		`{"prompt":"p","image":["../a.png","/etc/passwd","a.png"]}`,
		`{"session_id":1,"turns":[{"text":"a","image":"a.png"},{"text":"b","images":["a.png"]}]}`,
		`{"text":"t","image":"a.png","images":["a.png"]}`,
	} {
		f.Add(s)
	}
	dir := imageDir(f)
	f.Fuzz(func(t *testing.T, text string) {
		p, err := workload.ParseDataset(strings.NewReader(text), workload.FormatAuto)
		if err != nil {
			return
		}
		di, err := resolveImages(context.Background(), p, dir, "", nil)
		if err != nil {
			return
		}
		for _, e := range p.Entries {
			sent := di.request(workload.Request{Messages: e.Messages})
			for _, m := range sent.Messages {
				for _, u := range m.Images {
					if !(strings.HasPrefix(u, "data:image/") || strings.HasPrefix(strings.ToLower(u), "http") || strings.HasPrefix(strings.ToLower(u), "file:")) {
						t.Fatalf("would send image %.80q", u)
					}
				}
			}
		}
	})
}
