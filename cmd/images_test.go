package cmd

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kneebench/knee/results"
)

// visionServer answers chat requests as a vision-language model on vLLM
// would, counting a prompt as its words plus 256 tokens an image (a
// fixed-count rule, as Gemma 3's), and keeps the images it decoded from
// the data URLs: their format and size.
func visionServer(t *testing.T) (string, func() []string) {
	var mu sync.Mutex
	var seen []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			fmt.Fprint(w, `{"data":[{"id":"vl"}]}`)
			return
		}
		var body struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, 400)
			return
		}
		tokens := 0
		for _, m := range body.Messages {
			var s string
			if json.Unmarshal(m.Content, &s) == nil {
				tokens += len(strings.Fields(s))
				continue
			}
			var parts []struct {
				Type     string
				Text     string
				ImageURL struct{ URL string } `json:"image_url"`
			}
			if json.Unmarshal(m.Content, &parts) != nil {
				http.Error(w, `{"error":{"message":"bad content"}}`, 400)
				return
			}
			for _, p := range parts {
				switch p.Type {
				case "text":
					tokens += len(strings.Fields(p.Text))
				case "image_url":
					head, data, _ := strings.Cut(p.ImageURL.URL, ";base64,")
					raw, err := base64.StdEncoding.DecodeString(data)
					cfg, format, err2 := image.DecodeConfig(bytes.NewReader(raw))
					if err != nil || err2 != nil || head != "data:image/"+format {
						http.Error(w, `{"error":{"message":"bad image"}}`, 400)
						return
					}
					mu.Lock()
					seen = append(seen, fmt.Sprintf("%s %dx%d", format, cfg.Width, cfg.Height))
					mu.Unlock()
					tokens += 256
				}
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a cat\"}}]}\n\n")
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n", tokens)
	})
	return serveHTTP(t, h) + "/v1", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestImagesSent: --image-count 2 sends each request two images of the
// sizes asked in turn, in the format asked, as image_url parts the
// server decodes; the result counts the images, their bytes and the
// bodies', and the server's prompt tokens past the sized text give the
// tokens an image costs (256 here, by the server's rule).
func TestImagesSent(t *testing.T) {
	t.Parallel()
	inBubble(t, testImagesSent)
}

func testImagesSent(t *testing.T) {
	url, seen := visionServer(t)
	r := runJSON(t, "run", "--base-url", url, "--requests", "6", "--concurrency", "1", "--input-tokens", "40",
		"--image-count", "2", "--image-size", "64x48,32x32", "--image-format", "jpeg", "--no-server-metrics")
	im := r.Images
	if r.Requests.OK != 6 || im == nil || im.Requests != 6 || im.Images != 12 || im.ImageBytes <= 0 || im.BodyBytes <= im.ImageBytes ||
		im.TokensPerImage == nil || math.Abs(*im.TokensPerImage-256) > 2 {
		t.Fatalf("%d ok, images %+v", r.Requests.OK, im)
	}
	got := seen()
	sizes := map[string]int{}
	for _, s := range got {
		sizes[s]++
	}
	// The warm-up's and the measured requests' images, half of each size.
	if sizes["jpeg 64x48"] == 0 || sizes["jpeg 32x32"] != sizes["jpeg 64x48"] || len(sizes) != 2 {
		t.Errorf("images seen: %v", sizes)
	}
	for _, bad := range [][]string{
		{"--image-count", "2", "--image-format", "gif"},
		{"--image-count", "2", "--image-size", "64"},
		{"--image-size", "64x64"},
		{"--image-count", "1", "--endpoint", "completions"},
	} {
		if code, _, errOut := execute(t, append([]string{"run", "--base-url", url, "--requests", "1"}, bad...)...); code != ExitUsage {
			t.Errorf("%v: exit %d, %s; want a usage error", bad, code, errOut)
		}
	}
}

// TestImagesAgainstSim: knee sim's vision model counts the images knee
// sends by its rule, Qwen2-VL's ⌈H/28⌉ × ⌈W/28⌉, and the run reads that
// cost back exactly for three sizes; its text-only model refuses them.
func TestImagesAgainstSim(t *testing.T) {
	t.Parallel()
	inBubble(t, testImagesAgainstSim)
}

func testImagesAgainstSim(t *testing.T) {
	dir := t.TempDir()
	url := startSim(t, writeFile(t, dir, "models.yml", `
models:
  - name: qwen-vl
    context_length: 32768
    engine: instant
    vision: {patch_size: 14, merge_size: 2, encoder_params_billions: 0.675}
  - name: text
    context_length: 32768
    engine: instant
`), "")
	for _, c := range []struct {
		size string
		want float64
	}{{"448x448", 256}, {"640x480", 23 * 18}, {"1024x768", 37 * 28}} {
		r := runJSON(t, "run", "--base-url", url, "--model", "qwen-vl", "--requests", "4", "--concurrency", "1", "--input-tokens", "32",
			"--max-tokens", "4", "--image-count", "1", "--image-size", c.size, "--no-server-metrics")
		if im := r.Images; r.Requests.OK != 4 || im == nil || im.TokensPerImage == nil || *im.TokensPerImage != c.want {
			t.Errorf("%s: %d ok, images %+v; want %g tokens an image", c.size, r.Requests.OK, r.Images, c.want)
		}
	}
	// The same rule over the Responses API's input_image parts.
	r := runJSON(t, "run", "--base-url", url, "--model", "qwen-vl", "--endpoint", "responses", "--requests", "4", "--concurrency", "1", "--input-tokens", "32",
		"--max-tokens", "4", "--image-count", "1", "--image-size", "448x448", "--no-server-metrics")
	if im := r.Images; r.Requests.OK != 4 || im == nil || im.TokensPerImage == nil || *im.TokensPerImage != 256 {
		t.Errorf("responses: %d ok, images %+v; want 256 tokens an image", r.Requests.OK, r.Images)
	}
	// A text-only model refuses images: its warm-up refused whole, the
	// run stops in the server's words.
	code, out, errOut := execute(t, "run", "--base-url", url, "--model", "text", "--requests", "2", "--concurrency", "1", "--input-tokens", "32",
		"--image-count", "1", "--image-size", "64x64", "--no-server-metrics", "--output", "-")
	if code == 0 || !strings.Contains(errOut, "not a multimodal model") {
		t.Errorf("a text-only model took images: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestSecondImageCost: a second image a request moves TTFT by its
// prompt tokens' prefill and the encoder's work on it, live on knee sim
// and predicted in virtual time alike (within 10%).
func TestSecondImageCost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	models := writeFile(t, dir, "models.yml", "models:\n  - name: vl\n    preset: h100-80gb/llama-3.1-8b\n    vision: {patch_size: 14, merge_size: 2, encoder_params_billions: 0.675}\n")
	args := func(n string) []string {
		return []string{"--sim-models", models, "--input-tokens", "64", "--max-tokens", "4", "--image-count", n, "--image-size", "1024x1024"}
	}
	predicted := map[string]float64{}
	for _, n := range []string{"1", "2"} {
		code, stdout, errOut := execute(t, append([]string{"predict", "--rates", "1", "--step-duration", "30s", "--out-dir", dir, "--label", "p" + n}, args(n)...)...)
		if code != 0 {
			t.Fatalf("predict: exit %d\n%s\n%s", code, stdout, errOut)
		}
		sw, err := results.ReadSweep(filepath.Join(dir, "p"+n+".json"))
		if err != nil {
			t.Fatal(err)
		}
		predicted[n] = sw.Levels[0].Run.Stats.TTFT.P50
	}
	live := map[string]float64{}
	inBubble(t, func(t *testing.T) {
		url := startSim(t, models, "")
		for _, n := range []string{"1", "2"} {
			r := runJSON(t, append([]string{"run", "--base-url", url, "--rate", "1", "--requests", "8", "--quiet", "--ignore-eos"}, args(n)[2:]...)...)
			live[n] = r.Stats.TTFT.P50
		}
	})
	dp, dl := predicted["2"]-predicted["1"], live["2"]-live["1"]
	t.Logf("TTFT p50 with 1 and 2 images: live %.2f and %.2f ms, predicted %.2f and %.2f ms", live["1"], live["2"], predicted["1"], predicted["2"])
	if dp <= 0 || math.Abs(dl-dp) > 0.1*dp {
		t.Errorf("a second 1024x1024 image: TTFT +%.2f ms live, +%.2f ms predicted; want them within 10%%", dl, dp)
	}
}
