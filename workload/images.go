package workload

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"image/jpeg"
	"image/png"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// ImageSize is an image's width and height in pixels.
type ImageSize struct{ W, H int }

// ParseSizes reads --image-size: WxH, or several comma-separated (each
// request's images take them in turn).
func ParseSizes(s string) ([]ImageSize, error) {
	var out []ImageSize
	for _, part := range strings.Split(s, ",") {
		w, h, ok := strings.Cut(strings.TrimSpace(part), "x")
		wi, err1 := strconv.Atoi(w)
		hi, err2 := strconv.Atoi(h)
		if !ok || err1 != nil || err2 != nil || wi < 1 || hi < 1 || wi > 8192 || hi > 8192 {
			return nil, fmt.Errorf("%q is no image size: WxH, 1 to 8192 pixels a side (e.g. 512x512)", part)
		}
		out = append(out, ImageSize{wi, hi})
	}
	return out, nil
}

// Images makes the synthetic images requests carry: Count a request,
// of Sizes in turn, encoded as Format (png or jpeg, at Quality), each
// drawn from Seed and its number, so a run is reproducible. Every
// request's images differ unless Pool, above 0, makes image k the
// pool's image k mod Pool (an encoder-cache test).
type Images struct {
	Count   int
	Sizes   []ImageSize
	Format  string
	Quality int
	Pool    int
	Seed    uint64
	// URLBase, when set, sends each image as a URL under it (an image
	// server the target can reach, which serves Bytes) instead of inline.
	URLBase string
	// Virtual makes each image a PNG of its size that holds no pixels:
	// its header and its identity, all that a prediction in virtual time
	// reads of it (its tokens by size, the encoder cache by content),
	// made in a microsecond instead of drawn and encoded.
	Virtual bool

	mu    sync.Mutex
	cache map[int]string
}

// maxCachedImages bounds the images kept encoded: a pool's all, or the
// latest of a run whose images all differ.
const maxCachedImages = 4096

// URL is image n (the nth of the run) as sent: a data URL, or its
// address under URLBase.
func (im *Images) URL(n int) string {
	if im.Pool > 0 {
		n %= im.Pool
	}
	if im.URLBase != "" {
		return fmt.Sprintf("%s/%s", im.URLBase, im.Name(n))
	}
	if im.Virtual {
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(im.virtual(n))
	}
	return im.cached(n, func() string {
		// Drawn, encoded and base64-encoded in one pass into the one
		// string kept: no copy of the image beside it.
		var b strings.Builder
		b.WriteString("data:image/" + im.Format + ";base64,")
		enc := base64.NewEncoder(base64.StdEncoding, &b)
		im.encode(enc, n)
		_ = enc.Close()
		return b.String()
	})
}

// Name is image n's name under URLBase: the seed says which level's
// images it is of.
func (im *Images) Name(n int) string {
	return fmt.Sprintf("synthetic/%016x/%d.%s", im.Seed, n, im.Format)
}

// Encoded is image n encoded, and its MIME type: kept for the image
// server to write to every fetch without a copy of its own. Only under
// URLBase (inline, the cache holds data URLs).
func (im *Images) Encoded(n int) (string, string) {
	if im.Pool > 0 {
		n %= im.Pool
	}
	return im.cached(n, func() string {
		var b strings.Builder
		im.encode(&b, n)
		return b.String()
	}), "image/" + im.Format
}

// cached is image n as make makes it, kept while the cache has room. It
// holds one form, what requests send: data URLs inline, the encoded
// bytes the image server serves under URLBase.
func (im *Images) cached(n int, make func() string) string {
	im.mu.Lock()
	if u, ok := im.cache[n]; ok {
		im.mu.Unlock()
		return u
	}
	im.mu.Unlock()
	u := make()
	im.mu.Lock()
	if im.cache == nil || len(im.cache) >= maxCachedImages {
		im.cache = map[int]string{}
	}
	im.cache[n] = u
	im.mu.Unlock()
	return u
}

// virtual is image n as a PNG signature, its header (the size) and a
// text chunk naming the seed and n (the identity), without pixels.
func (im *Images) virtual(n int) []byte {
	sz := im.Sizes[n%len(im.Sizes)]
	b := []byte("\x89PNG\r\n\x1a\n")
	chunk := func(kind string, data []byte) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
		start := len(b)
		b = append(append(b, kind...), data...)
		b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(sz.W))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(sz.H))
	chunk("IHDR", append(ihdr, 8, 2, 0, 0, 0)) // 8-bit RGB
	chunk("tEXt", fmt.Appendf(nil, "knee\x00%016x-%d", im.Seed, n))
	chunk("IEND", nil)
	return b
}

// encode writes image n to w as its format, drawing each pixel as the
// encoder asks for it (see pattern): an 8192×8192 image is never held
// as the 256 MiB of pixels it describes.
func (im *Images) encode(w io.Writer, n int) {
	sz := im.Sizes[n%len(im.Sizes)]
	p := newPattern(sz, im.Seed^uint64(n)*0x9e3779b97f4a7c15|1)
	if im.Format == "jpeg" {
		_ = jpeg.Encode(w, p, &jpeg.Options{Quality: im.Quality})
		return
	}
	_ = png.Encode(w, p)
}

// prepareBytes bounds the images Prepare makes ahead, by what they weigh
// encoded and by their pixels: an image is drawn as it is encoded, never
// held whole, but an encoding that did not compress would hold some 4
// bytes a pixel with its base64 and its buffer's growth, and pixels are
// time (an 8192×8192 PNG takes some 5 s). Past either bound the rest are
// made as requests need them, on the send path (where the client's
// health verdict says when that makes sends late).
const prepareBytes = 512 << 20

// ForLevel is the images of one level: drawn from the seed and the
// level's nonce, as its prompts' text is, so that no level's images (nor
// another run's) warm the next's encoder or prefix cache.
func (im *Images) ForLevel(nonce string) *Images {
	h := fnv.New64a()
	h.Write([]byte(nonce))
	return &Images{Count: im.Count, Sizes: im.Sizes, Format: im.Format, Quality: im.Quality, Pool: im.Pool, Seed: im.Seed ^ h.Sum64(), URLBase: im.URLBase, Virtual: im.Virtual}
}

// Prepare makes the first n images ahead, on every core, so that a
// level's requests find them made instead of encoding them on the send
// path (a 1024×1024 PNG takes some 100 ms). It stops at prepareBytes.
func (im *Images) Prepare(n int) {
	if im.Virtual {
		return
	}
	if im.Pool > 0 {
		n = min(n, im.Pool)
	}
	n, workers := im.prepareLimits(n, runtime.NumCPU())
	next, total := 0, 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				k := next
				next++
				stop := k >= n || total >= prepareBytes
				mu.Unlock()
				if stop {
					return
				}
				var size int
				if im.URLBase != "" {
					b, _ := im.Encoded(k)
					size = len(b)
				} else {
					size = len(im.URL(k))
				}
				mu.Lock()
				total += size
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// prepareLimits bounds Prepare's n images and its workers on cpus by the
// pixels they encode (4 bytes each, the worst an encoding holds): at most
// prepareBytes of them at once and in all, and
// at least one image, the first a request needs.
func (im *Images) prepareLimits(n, cpus int) (count, workers int) {
	largest := 1
	for _, sz := range im.Sizes {
		largest = max(largest, 4*sz.W*sz.H)
	}
	fit := max(prepareBytes/largest, 1)
	return min(n, maxCachedImages, fit), max(min(cpus, fit), 1)
}

// Check checks the spec.
func (im *Images) Check() error {
	switch {
	case im.Count < 1 || im.Count > 64:
		return fmt.Errorf("--image-count %d: 1 to 64 images a request", im.Count)
	case len(im.Sizes) == 0:
		return fmt.Errorf("--image-size is needed with --image-count")
	case im.Format != "png" && im.Format != "jpeg":
		return fmt.Errorf("--image-format %q: png or jpeg", im.Format)
	case im.Quality < 1 || im.Quality > 100:
		return fmt.Errorf("--image-quality %d: 1 to 100", im.Quality)
	case im.Pool < 0:
		return fmt.Errorf("--image-pool %d must not be negative", im.Pool)
	}
	return nil
}

// WithImages adds Images' Count images to each request of Source, on its
// last user message: request i carries images i×Count to i×Count+Count−1.
type WithImages struct {
	Source Source
	Images *Images
}

// Request implements Source.
func (w WithImages) Request(i int) Request {
	r := w.Source.Request(i)
	msgs := append([]Message(nil), r.Messages...)
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Role != "user" {
			continue
		}
		imgs := make([]string, w.Images.Count)
		for k := range imgs {
			imgs[k] = w.Images.URL(i*w.Images.Count + k)
		}
		msgs[j].Images = imgs
		break
	}
	r.Messages = msgs
	return r
}

// String says what the images are, for a run's configuration.
func (im *Images) String() string {
	sizes := make([]string, len(im.Sizes))
	for i, s := range im.Sizes {
		sizes[i] = fmt.Sprintf("%dx%d", s.W, s.H)
	}
	out := fmt.Sprintf("%d a request · %s · %s", im.Count, strings.Join(sizes, ","), im.Format)
	if im.Format == "jpeg" {
		out += fmt.Sprintf(" quality %d", im.Quality)
	}
	if im.Pool > 0 {
		out += fmt.Sprintf(" · a pool of %d", im.Pool)
	}
	if im.URLBase != "" {
		out += " · served by knee under " + im.URLBase
	}
	return out
}
