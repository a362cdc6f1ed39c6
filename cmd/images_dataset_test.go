package cmd

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
	"github.com/kneebench/knee/simulator"

	"github.com/kneebench/knee/results"
)

// writeImage writes a w×h image as PNG or JPEG (by the name's extension).
func writeImage(t *testing.T, path string, w, h int) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	var b bytes.Buffer
	var err error
	if strings.HasSuffix(path, ".jpg") {
		err = jpeg.Encode(&b, img, nil)
	} else {
		err = png.Encode(&b, img)
	}
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = os.WriteFile(path, b.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestImageDataset: a LLaVA-style file's images, named by paths relative
// to --image-dir (or to the file), are read and sent as data URLs of
// their own format, with LLaVA's <image> placeholder taken out of the
// text; an AIPerf single_turn file's "images" too. A path that is not a
// readable image is refused naming its line before anything is sent.
func TestImageDataset(t *testing.T) {
	t.Parallel()
	inBubble(t, testImageDataset)
}

func testImageDataset(t *testing.T) {
	url, seen := visionServer(t)
	dir := t.TempDir()
	pics := filepath.Join(dir, "pics")
	writeImage(t, filepath.Join(pics, "coco", "a.png"), 64, 48)
	writeImage(t, filepath.Join(pics, "sam", "b.jpg"), 32, 32)
	llava := writeFile(t, dir, "llava.json", `[
  {"id": "1", "image": "coco/a.png", "conversations": [{"from": "human", "value": "<image>\nWhat is on the bus?"}, {"from": "gpt", "value": "A cat sits on it."}]},
  {"id": "2", "image": "sam/b.jpg", "conversations": [{"from": "human", "value": "Describe this.\n<image>"}, {"from": "gpt", "value": "A dark square."}]}
]`)
	r := runJSON(t, "run", "--base-url", url, "--dataset", llava, "--image-dir", pics, "--requests", "4", "--concurrency", "1", "--no-server-metrics")
	if r.Requests.OK != 4 || r.Images == nil || r.Images.Images != 4 || !strings.Contains(r.Config.Images, "2 files read") {
		t.Fatalf("%d ok, images %+v, config %q", r.Requests.OK, r.Images, r.Config.Images)
	}
	sizes := map[string]int{}
	for _, s := range seen() {
		sizes[s]++
	}
	if sizes["png 64x48"] == 0 || sizes["jpeg 32x32"] == 0 || len(sizes) != 2 {
		t.Errorf("images seen: %v", sizes)
	}
	// Relative to the file itself when no --image-dir is given.
	single := writeFile(t, pics, "single.jsonl", `{"text": "two pictures", "images": ["coco/a.png", "sam/b.jpg"]}`+"\n")
	r = runJSON(t, "run", "--base-url", url, "--dataset", single, "--requests", "2", "--concurrency", "1", "--no-server-metrics")
	if r.Requests.OK != 2 || r.Images == nil || r.Images.Images != 4 {
		t.Errorf("single_turn: %d ok, images %+v", r.Requests.OK, r.Images)
	}

	fifo := filepath.Join(dir, "pipe.png")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, pics, "notes.png", "not a picture")
	for _, c := range []struct{ image, want string }{
		{"coco/missing.png", "line 2"},
		{"notes.png", "no PNG, JPEG, GIF or WebP image"},
		{fifo, "not a regular file"},
		{"/dev/zero", "not a regular file"},
		{"s3://bucket/a.png", "s3: URL"},
		{"data:image/png;base64,AAAA", "holds no PNG"},
	} {
		bad := writeFile(t, dir, "bad.jsonl", `{"text": "fine", "image": "coco/a.png"}`+"\n"+`{"text": "this one", "image": "`+c.image+`"}`+"\n")
		code, out, errOut := execute(t, "run", "--base-url", url, "--dataset", bad, "--image-dir", pics, "--requests", "1")
		if code != ExitUsage || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("%s: exit %d, %q; want a usage error saying %q", c.image, code, errOut, c.want)
		}
	}
	for _, bad := range [][]string{
		{"--endpoint", "completions"},
		{"--image-count", "1"},
	} {
		if code, _, errOut := execute(t, append([]string{"run", "--base-url", url, "--dataset", llava, "--image-dir", pics, "--requests", "1"}, bad...)...); code != ExitUsage {
			t.Errorf("%v: exit %d, %s; want a usage error", bad, code, errOut)
		}
	}
}

// TestUploadTime: a request's body takes its time to send when the
// server reads it late; the result says how much of TTFT that was. The
// server waits 300 ms before reading a 16 MB body, more than the
// sockets' buffers hold, so no upload can end sooner.
func TestUploadTime(t *testing.T) {
	quiet.Wire(t, func() { testUploadTime(t) })
}

func testUploadTime(t *testing.T) {
	const wait = 300 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			fmt.Fprint(w, `{"data":[{"id":"vl"}]}`)
			return
		}
		time.Sleep(wait)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"big\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	// A PNG header, then 12 MB: knee checks the header and sends the file.
	writeImage(t, filepath.Join(dir, "big.png"), 4, 4)
	head, err := os.ReadFile(filepath.Join(dir, "big.png"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.png"), append(head, make([]byte, 12<<20)...), 0o644); err != nil {
		t.Fatal(err)
	}
	data := writeFile(t, dir, "big.jsonl", `{"text": "how big?", "image": "big.png"}`+"\n")
	r := runJSON(t, "run", "--base-url", srv.URL+"/v1", "--dataset", data, "--requests", "2", "--concurrency", "1", "--no-server-metrics")
	im := r.Images
	if r.Requests.OK != 2 || im == nil || im.Uploads != 2 || im.BodyBytes < 2*16<<20 || im.UploadMeanMs == nil || im.UploadShare == nil {
		t.Fatalf("%d ok, images %+v", r.Requests.OK, im)
	}
	if *im.UploadMeanMs < float64(wait.Milliseconds()) || *im.UploadShare > 1 || float64(im.UploadMaxNs)/1e6 < *im.UploadMeanMs {
		t.Errorf("upload mean %.1f ms (want ≥ %s), share of TTFT %.2f (want ≤ 1), longest %.1f ms", *im.UploadMeanMs, wait, *im.UploadShare, float64(im.UploadMaxNs)/1e6)
	}
}

// TestImagesByURL: with --image-serve knee serves the run's images and
// sends their URLs, which knee sim fetches as vLLM does and counts by its
// rule, exactly as the same images sent inline; a dataset's files go as
// URLs under --image-url-base, here a file server of their folder.
func TestImagesByURL(t *testing.T) {
	quiet.Wire(t, func() { testImagesByURL(t) })
}

func testImagesByURL(t *testing.T) {
	dir := t.TempDir()
	models := writeFile(t, dir, "models.yml", `
models:
  - name: qwen-vl
    context_length: 32768
    engine: instant
    vision: {patch_size: 14, merge_size: 2, encoder_params_billions: 0.675}
`)
	// By default knee sim fetches nothing on a private address: every
	// image URL of the run's own loopback server is refused alike.
	closed := startSimOptions(t, models, "builtin:bench-responses", func(*simulator.Options) {})
	code, _, errOut := execute(t, "run", "--base-url", closed, "--model", "qwen-vl", "--requests", "2", "--concurrency", "1", "--max-tokens", "4",
		"--no-server-metrics", "--input-tokens", "32", "--image-count", "1", "--image-serve", "127.0.0.1:0", "-o", filepath.Join(dir, "closed.json"))
	if code == 0 || !strings.Contains(errOut, "could not be fetched") {
		t.Errorf("a loopback image URL was fetched by default: exit %d, %s", code, errOut)
	}
	url := startSimOptions(t, models, "builtin:bench-responses", func(o *simulator.Options) { o.AllowedMediaHosts = []string{"127.0.0.1"} })
	base := []string{"run", "--base-url", url, "--model", "qwen-vl", "--requests", "3", "--concurrency", "1", "--max-tokens", "4", "--no-server-metrics"}
	r := runJSON(t, append(base, "--input-tokens", "32", "--image-count", "2", "--image-size", "448x448,640x480", "--image-serve", "127.0.0.1:0")...)
	// Two images a request: 256 and 23×18 tokens.
	if im := r.Images; r.Requests.OK != 3 || im == nil || im.TokensPerImage == nil || *im.TokensPerImage != (256+23*18)/2.0 ||
		!strings.Contains(r.Config.Images, "served by knee under http://127.0.0.1:") || im.ImageBytes > 100*im.Images {
		t.Errorf("served: %d ok, images %+v, config %q", r.Requests.OK, r.Images, r.Config.Images)
	}
	// knee sim fetched every image of the window (and the warm-up's).
	if im := r.Images; im == nil || im.Served == nil || *im.Served < im.Images {
		t.Errorf("the fetches of the served images are not counted: %+v", r.Images)
	}

	pics := filepath.Join(dir, "pics")
	writeImage(t, filepath.Join(pics, "a dir", "a.png"), 448, 448)
	files := httptest.NewServer(http.FileServer(http.Dir(pics)))
	t.Cleanup(files.Close)
	data := writeFile(t, pics, "d.jsonl", `{"text": "what is it?", "image": "a dir/a.png"}`+"\n")
	for _, how := range [][]string{{"--image-url-base", files.URL + "/"}, {"--image-serve", "127.0.0.1:0"}} {
		r = runJSON(t, append(append(base, "--dataset", data), how...)...)
		if r.Requests.OK != 3 || r.Images == nil || r.Images.Images != 3 || r.Tokens.InputTotal < 3*256 {
			t.Errorf("%v: %d ok, images %+v, %d input tokens", how, r.Requests.OK, r.Images, r.Tokens.InputTotal)
		}
	}
	for _, bad := range [][]string{
		{"--image-count", "1", "--image-url-base", files.URL},
		{"--image-count", "1", "--image-serve", "0.0.0.0:0"},
		{"--image-count", "1", "--image-serve", "127.0.0.1:0", "--image-url-base", "ftp://x"},
		{"--image-serve", "127.0.0.1:0"},
	} {
		if code, _, errOut := execute(t, append(base, bad...)...); code != ExitUsage {
			t.Errorf("%v: exit %d, %s; want a usage error", bad, code, errOut)
		}
	}
}

// TestImagesPlanned: knee plan sizes a fleet for requests with images
// when told the candidates' vision rule: one 1024x1024 image a request
// (1,369 tokens by Qwen2-VL's rule, and the encoder's work) lowers a
// GPU's headroom many times over against the same text alone, and the
// KV note counts the images' tokens. A vision family knee sim knows
// counts by its rule (Gemma 3: 256 an image, whatever its size).
func TestImagesPlanned(t *testing.T) {
	t.Parallel()
	inBubble(t, testImagesPlanned)
}

func testImagesPlanned(t *testing.T) {
	dir := t.TempDir()
	plan := func(label string, extra ...string) *results.Plan {
		args := append([]string{"plan", "--rate", "4", "--input-tokens", "128", "--max-tokens", "64", "--gpus", "h100-80gb", "--models", "llama-3.1-8b",
			"--window", "1m", "--slo", "ttft_p95:500", "--out-dir", dir, "--label", label}, extra...)
		code, out, errOut := execute(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", extra, code, out, errOut)
		}
		return readPlan(t, filepath.Join(dir, label+".json"))
	}
	text := plan("text")
	vl := plan("vl", "--image-count", "1", "--image-size", "1024x1024", "--vision", "qwen2-vl")
	if text.Rows[0].Headroom < 4*vl.Rows[0].Headroom {
		t.Errorf("headroom %.1f/s with text alone, %.1f/s with an image a request; want the image to cost most of it", text.Rows[0].Headroom, vl.Rows[0].Headroom)
	}
	if !slices.ContainsFunc(vl.Notes, func(n string) bool { return strings.Contains(n, "images' 1369") }) {
		t.Errorf("the KV note does not count the images: %q", vl.Notes)
	}
	for _, bad := range [][]string{{"--image-count", "1"}, {"--image-count", "1", "--vision", "dall-e"}} {
		args := append([]string{"plan", "--rate", "4", "--gpus", "h100-80gb", "--models", "llama-3.1-8b", "--out-dir", dir}, bad...)
		if code, _, errOut := execute(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, %s; want a usage error", bad, code, errOut)
		}
	}
	url := startSim(t, writeFile(t, dir, "models.yml", `
models:
  - name: gemma
    context_length: 32768
    engine: instant
    vision: {family: gemma-3}
`), "")
	r := runJSON(t, "run", "--base-url", url, "--model", "gemma", "--requests", "2", "--concurrency", "1", "--input-tokens", "32",
		"--max-tokens", "4", "--image-count", "1", "--image-size", "640x480", "--no-server-metrics")
	if im := r.Images; r.Requests.OK != 2 || im == nil || im.TokensPerImage == nil || *im.TokensPerImage != 256 {
		t.Errorf("gemma-3: %d ok, images %+v; want 256 tokens an image", r.Requests.OK, r.Images)
	}
}
