package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
)

const visionModels = `
models:
  - name: qwen-vl
    context_length: 32768
    engine: instant
    vision: {patch_size: 14, merge_size: 2, encoder_params_billions: 0.675}
  - name: gemma-vl
    context_length: 32768
    engine: instant
    vision: {tokens_per_image: 256, encoder_params_billions: 0.4}
  - name: instant
    context_length: 4096
    engine: instant
`

func pngURL(t *testing.T, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// TestImageTokensByRule: a vision model counts an image's prompt tokens
// by its rule: Qwen2-VL's ⌈H/28⌉ × ⌈W/28⌉ exactly for three sizes, a
// fixed 256 for a Gemma-3-like model; a text-only model refuses images
// naming the part, and a URL that is no data URL is refused naming it.
func TestImageTokensByRule(t *testing.T) {
	t.Parallel()
	inBubble(t, testImageTokensByRule)
}

func testImageTokensByRule(t *testing.T) {
	ts := startSim(t, visionModels, "", "")
	prompt := func(model, parts string) (int, []byte) {
		body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":[{"type":"text","text":"what is this"}%s]}],"max_tokens":2}`, model, parts)
		code, b := post(t, ts.URL+"/v1/chat/completions", body)
		var r struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			}
		}
		_ = json.Unmarshal(b, &r)
		if code != 200 {
			return code, b
		}
		return r.Usage.PromptTokens, b
	}
	img := func(w, h int) string {
		return fmt.Sprintf(`,{"type":"image_url","image_url":{"url":%q}}`, pngURL(t, w, h))
	}
	base, _ := prompt("qwen-vl", "")
	for _, c := range []struct{ w, h, want int }{{448, 448, 256}, {640, 480, 23 * 18}, {1024, 768, 37 * 28}} {
		if got, b := prompt("qwen-vl", img(c.w, c.h)); got-base != c.want {
			t.Errorf("%dx%d: %d tokens past the text, want %d (%s)", c.w, c.h, got-base, c.want, b)
		}
	}
	gbase, _ := prompt("gemma-vl", "")
	if got, _ := prompt("gemma-vl", img(640, 480)+img(100, 100)); got-gbase != 512 {
		t.Errorf("two Images on a fixed-count model: %d tokens past the text, want 512", got-gbase)
	}
	for _, c := range []struct{ model, parts, param string }{
		{"instant", img(64, 64), "messages[0].content[1].type"},
		{"qwen-vl", `,{"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}`, "messages[0].content[1].image_url"},
		{"qwen-vl", `,{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}`, "messages[0].content[1].image_url"},
	} {
		code, b := prompt(c.model, c.parts)
		if e := errorOf(t, b); code != 400 || e.Error.Param == nil || *e.Error.Param != c.param {
			t.Errorf("%s %.60s: %d %s; want 400 naming %s", c.model, c.parts, code, b, c.param)
		}
	}
}

// TestEncoderCache: the encoder's work is the image's patches at twice
// its parameters, and an image seen lately costs none again.
func TestEncoderCache(t *testing.T) {
	v := &VisionSpec{PatchSize: 14, MergeSize: 2, EncoderParamsBillions: 0.5}
	var cache EncoderCache
	url, _ := json.Marshal(map[string]string{"url": pngURL(t, 448, 448)})
	imgs := &Images{}
	imgs.Add(url, "messages[0].content[1]")
	plan := &Plan{PromptTokens: 10}
	if err := WithImages(plan, imgs, v, &cache, nil, nil, 32768); err != nil {
		t.Fatal(err)
	}
	if want := 2 * 0.5e9 * 256 * 4; plan.PromptTokens != 266 || plan.EncoderFLOPs != want {
		t.Errorf("%d prompt tokens, %g encoder FLOPs; want 266 and %g", plan.PromptTokens, plan.EncoderFLOPs, want)
	}
	again := &Plan{PromptTokens: 10}
	if err := WithImages(again, imgs, v, &cache, nil, nil, 32768); err != nil || again.EncoderFLOPs != 0 {
		t.Errorf("the same image again: %g encoder FLOPs, want none (%v)", again.EncoderFLOPs, err)
	}
}

// TestMediaFetchRefusesPrivateAddresses: image URLs on loopback, private,
// shared, link-local or unspecified addresses (a cloud's metadata
// service, the sim's own /metrics) are refused with one neutral error,
// as is any scheme but http(s); public addresses are not refused by the
// check.
func TestMediaFetchRefusesPrivateAddresses(t *testing.T) {
	for ip, public := range map[string]bool{
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false, "100.64.0.1": false,
		"169.254.169.254": false, "0.0.0.0": false, "::1": false, "fe80::1": false, "fd00::1": false, "::ffff:127.0.0.1": false,
		"8.8.8.8": true, "2606:4700::1111": true,
	} {
		if got := publicIP(net.ParseIP(ip)); got != public {
			t.Errorf("publicIP(%s) = %v, want %v", ip, got, public)
		}
	}
	m := newMediaFetcher(nil)
	var held atomic.Int64
	var mine int64
	for _, u := range []string{"http://127.0.0.1:1/a.png", "http://169.254.169.254/latest/meta-data", "http://[::1]:8080/metrics", "gopher://x/", "http:///nohost"} {
		if _, err := m.fetch(u, &held, 1<<30, &mine); err != errNotFetched {
			t.Errorf("%s: %v, want the neutral refusal", u, err)
		}
	}
}

// sizedBody answers every request with n bytes, no socket opened.
type sizedBody int

func (n sizedBody) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Body: io.NopCloser(io.LimitReader(zeros{}, int64(n))), Header: http.Header{}, Request: r}, nil
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestFetchedImagesCountAgainstTheBound: an image fetched by URL holds
// room among the bodies in flight while it is read; one that would take
// them past the bound is refused busy (503), the room it took given
// back, and a fetch within it holds its bytes until released.
func TestFetchedImagesCountAgainstTheBound(t *testing.T) {
	m := newMediaFetcher(nil)
	m.client.Transport = sizedBody(8 << 20)
	var held atomic.Int64
	var mine int64
	_, err := m.fetch("http://images.test/a.png", &held, 4<<20, &mine)
	var busy *APIError
	if !errors.As(err, &busy) || busy.Status != 503 {
		t.Fatalf("an 8 MiB image under a 4 MiB bound: %v, want busy", err)
	}
	held.Add(-mine)
	if held.Load() != 0 {
		t.Errorf("%d bytes still held after the refusal was released", held.Load())
	}
	mine = 0
	b, err := m.fetch("http://images.test/a.png", &held, 64<<20, &mine)
	if err != nil || len(b) != 8<<20 || held.Load() < 8<<20 {
		t.Errorf("within the bound: %d bytes, %v, %d held", len(b), err, held.Load())
	}
}

// FuzzToolSchema: whatever a tool's parameters hold, the argument a call
// fills is one of its properties, or none.
func FuzzToolSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`))
	f.Add([]byte(`{"properties":{"a":{"type":["string","null"]},"b":{"type":"integer"}},"required":["zz"]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		key := argumentKey(b)
		if key == "" {
			return
		}
		var s struct {
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("a key %q from a schema that does not parse: %v", key, err)
		}
		if _, ok := s.Properties[key]; !ok && !slices.Contains(s.Required, key) {
			t.Fatalf("key %q is neither a property nor required in %s", key, b)
		}
	})
}
