package workload

import (
	"bytes"
	"encoding/base64"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"runtime"
	"strings"
	"testing"
	"time"
)

func decodeURL(t *testing.T, u string) (string, image.Config) {
	t.Helper()
	head, data, ok := strings.Cut(u, ";base64,")
	raw, err := base64.StdEncoding.DecodeString(data)
	if !ok || err != nil {
		t.Fatalf("not a base64 data URL: %.60s", u)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil || head != "data:image/"+format {
		t.Fatalf("%s: %v (%s)", head, err, format)
	}
	return format, cfg
}

// TestImagesDeterministic: images are the seed's and their number's
// (the same run, the same images), of the sizes asked in turn, in the
// format asked; without a pool every one differs, with one image k is
// the pool's k mod Pool.
func TestImagesDeterministic(t *testing.T) {
	sizes, err := ParseSizes("40x30, 16x16")
	if err != nil {
		t.Fatal(err)
	}
	a := &Images{Count: 2, Sizes: sizes, Format: "png", Quality: 85, Seed: 7}
	b := &Images{Count: 2, Sizes: sizes, Format: "png", Quality: 85, Seed: 7}
	if a.URL(3) != b.URL(3) || a.URL(3) == a.URL(5) {
		t.Error("the same image differs between runs, or two images are alike")
	}
	if f, c := decodeURL(t, a.URL(0)); f != "png" || c.Width != 40 || c.Height != 30 {
		t.Errorf("image 0: %s %dx%d", f, c.Width, c.Height)
	}
	if _, c := decodeURL(t, a.URL(1)); c.Width != 16 {
		t.Errorf("image 1 is %d wide, want the second size", c.Width)
	}
	pool := &Images{Count: 1, Sizes: sizes[:1], Format: "jpeg", Quality: 50, Pool: 3, Seed: 7}
	if pool.URL(1) != pool.URL(4) || pool.URL(1) == pool.URL(2) {
		t.Error("a pool of 3 does not reuse image 1 as image 4")
	}
	if f, _ := decodeURL(t, pool.URL(0)); f != "jpeg" {
		t.Errorf("format %s", f)
	}
	req := WithImages{Source: FixedPrompt{Text: "what is this?"}, Images: a}.Request(2)
	if m := req.Messages[len(req.Messages)-1]; len(m.Images) != 2 || m.Images[0] != a.URL(4) {
		t.Errorf("request 2 carries %d images, the first image 4: %v", len(m.Images), m.Images[0] == a.URL(4))
	}
	for _, bad := range []string{"64", "0x5", "9000x10", "axb"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("size %q accepted", bad)
		}
	}
}

// TestPrefixTrackerSeesImages: the same image after the same text is a
// shared prefix; another image after it is not.
func TestPrefixTrackerSeesImages(t *testing.T) {
	req := func(img string) *Request {
		return &Request{Messages: []Message{{Role: "user", Content: "describe the picture", Images: []string{img}}}}
	}
	tr := NewPrefixTracker()
	tr.Share(req("data:image/png;base64,AAAA"))
	same := tr.Share(req("data:image/png;base64,AAAA"))
	other := tr.Share(req("data:image/png;base64,BBBB"))
	if same < 0.9 || other > 0.1 {
		t.Errorf("the same image again shares %.2f of the prompt, another image %.2f; want most and almost none", same, other)
	}
}

// TestPrepareBoundedByPixels: images made ahead are bounded by the
// pixels they draw, at once and in all, never below one.
func TestPrepareBoundedByPixels(t *testing.T) {
	for _, c := range []struct {
		size              ImageSize
		n, count, workers int
	}{
		{ImageSize{W: 1024, H: 1024}, 18, 18, 8},
		{ImageSize{W: 8192, H: 8192}, 18, 2, 2},
		{ImageSize{W: 16384, H: 16384}, 18, 1, 1},
	} {
		im := &Images{Sizes: []ImageSize{{W: 64, H: 64}, c.size}}
		if count, workers := im.prepareLimits(c.n, 8); count != c.count || workers != c.workers {
			t.Errorf("%dx%d: %d images on %d workers, want %d on %d", c.size.W, c.size.H, count, workers, c.count, c.workers)
		}
	}
}

// BenchmarkImageEncode: a 4096×4096 image drawn and encoded into the data
// URL a request sends, with the most heap in use while it ran. The image
// is drawn as the encoder reads it (issue 56): its 64 MiB of pixels are
// never held, so the peak is the encoding's output and its base64.
func BenchmarkImageEncode(b *testing.B) {
	for _, format := range []string{"png", "jpeg"} {
		b.Run(format, func(b *testing.B) {
			var peak uint64
			stop := make(chan struct{})
			done := make(chan struct{})
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			go func() {
				defer close(done)
				var m runtime.MemStats
				for {
					select {
					case <-stop:
						return
					case <-time.After(10 * time.Millisecond):
					}
					runtime.ReadMemStats(&m)
					peak = max(peak, m.HeapInuse)
				}
			}()
			for i := range b.N {
				im := &Images{Count: 1, Sizes: []ImageSize{{4096, 4096}}, Format: format, Quality: 90, Seed: uint64(i)}
				_ = im.URL(0)
			}
			close(stop)
			<-done
			b.ReportMetric(float64(peak-min(peak, base.HeapInuse))/(1<<20), "peak-MiB")
		})
	}
}
