package model

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"image"
	_ "image/jpeg" // the formats a data URL's image is read in
	_ "image/png"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/kneebench/knee/simulator/content"
)

// VisionSpec makes a model a vision-language model: it takes images in
// image_url parts (data URLs, or http(s) URLs it fetches as vLLM does), each costing prompt
// tokens by its size and a pass of the vision encoder. An image's tokens
// are TokensPerImage when set (Gemma 3's 256, LLaVA-1.5's 576), else
// Qwen2-VL's rule: ⌈H/(patch·merge)⌉ × ⌈W/(patch·merge)⌉. The encoder
// works 2 × EncoderParamsBillions × 10⁹ FLOPs a patch (merge² patches a
// token), in the step that schedules the request; an image seen
// recently (the encoder cache, by content) costs no encoder pass again.
//
// Family, when set, names one of VisionFamilies, whose rule fills the
// fields not given.
type VisionSpec struct {
	Family                string  `yaml:"family,omitempty"`
	PatchSize             int     `yaml:"patch_size,omitempty"`
	MergeSize             int     `yaml:"merge_size,omitempty"`
	TokensPerImage        int     `yaml:"tokens_per_image,omitempty"`
	EncoderParamsBillions float64 `yaml:"encoder_params_billions,omitempty"`
}

// VisionFamilies are the rules of well-known vision-language models,
// from their configs:
//   - qwen2-vl (Qwen2-VL, Qwen2.5-VL): 14-pixel patches merged 2×2, so
//     ⌈H/28⌉ × ⌈W/28⌉ tokens an image (before the processor's resize
//     bounds); a 675M-parameter ViT.
//   - gemma-3: every image 256 tokens (896×896, pan-and-scan off), its
//     SigLIP encoder (some 400M parameters) working on 64×64 patches
//     pooled 4×4 into them.
//   - llava-1.5: 576 tokens (336×336 in 14-pixel patches), a CLIP
//     ViT-L/14 of some 300M parameters.
var VisionFamilies = map[string]VisionSpec{
	"qwen2-vl":  {PatchSize: 14, MergeSize: 2, EncoderParamsBillions: 0.675},
	"gemma-3":   {TokensPerImage: 256, MergeSize: 4, EncoderParamsBillions: 0.4},
	"llava-1.5": {TokensPerImage: 576, MergeSize: 1, EncoderParamsBillions: 0.3},
}

// VisionFamilyNames lists VisionFamilies' names, sorted.
func VisionFamilyNames() []string {
	return slices.Sorted(maps.Keys(VisionFamilies))
}

// Validate checks the spec, first filling what its family gives.
func (v *VisionSpec) Validate() error {
	if v.Family != "" {
		f, ok := VisionFamilies[v.Family]
		if !ok {
			return fmt.Errorf("vision.family %q: one of %s", v.Family, strings.Join(VisionFamilyNames(), ", "))
		}
		if v.PatchSize == 0 && v.TokensPerImage == 0 {
			v.PatchSize, v.TokensPerImage = f.PatchSize, f.TokensPerImage
		}
		if v.MergeSize == 0 {
			v.MergeSize = f.MergeSize
		}
		if v.EncoderParamsBillions == 0 {
			v.EncoderParamsBillions = f.EncoderParamsBillions
		}
	}
	switch {
	case v.TokensPerImage < 0 || v.TokensPerImage > 100_000:
		return errors.New("vision.tokens_per_image must be between 0 and 100000")
	case v.TokensPerImage == 0 && (v.PatchSize < 1 || v.PatchSize > 1024 || v.MergeSize < 1 || v.MergeSize > 16):
		return errors.New("vision needs tokens_per_image, or patch_size (1-1024) and merge_size (1-16)")
	case !(v.EncoderParamsBillions >= 0 && v.EncoderParamsBillions <= 100):
		return errors.New("vision.encoder_params_billions must be between 0 and 100")
	}
	return nil
}

// Tokens is an image's prompt tokens by the spec's rule.
func (v *VisionSpec) Tokens(w, h int) int {
	if v.TokensPerImage > 0 {
		return v.TokensPerImage
	}
	side := v.PatchSize * v.MergeSize
	return ((h + side - 1) / side) * ((w + side - 1) / side)
}

// encoderFLOPs is the encoder's work on an image of n tokens.
func (v *VisionSpec) encoderFLOPs(tokens int) float64 {
	merge := max(v.MergeSize, 1)
	return 2 * v.EncoderParamsBillions * 1e9 * float64(tokens*merge*merge)
}

// imageRef is an image a request sent: its content's hash and size.
type imageRef struct {
	hash uint64
	w, h int
}

// Fetch gets the image at an http(s) URL; nil fetches nothing.
type Fetch func(url string) ([]byte, error)

// imageOf reads an image_url part's URL: a data URL of a PNG or JPEG, or
// an http(s) URL that fetch gets, its size read from its header.
func imageOf(raw json.RawMessage, param string, fetch Fetch) (imageRef, error) {
	var u struct {
		URL string `json:"url"`
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		u.URL = s
	} else if json.Unmarshal(raw, &u) != nil || u.URL == "" {
		return imageRef{}, badRequest(param, "'%s' must hold a url", param)
	}
	var b []byte
	scheme, _, _ := strings.Cut(u.URL, ":")
	switch scheme = strings.ToLower(scheme); {
	case (scheme == "http" || scheme == "https") && fetch != nil:
		var err error
		if b, err = fetch(u.URL); err != nil {
			var busy *APIError
			if errors.As(err, &busy) {
				// The server's own refusal (out of room for it): its words.
				return imageRef{}, busy
			}
			return imageRef{}, badRequest(param, "the image at %s could not be fetched: %v", u.URL, err)
		}
	case scheme == "file":
		return imageRef{}, badRequest(param, "Cannot load local files without `--allowed-local-media-path`.")
	default:
		head, data, ok := strings.Cut(u.URL, ";base64,")
		if !ok || !strings.HasPrefix(head, "data:image/") {
			return imageRef{}, badRequest(param, "send the image as a base64 data URL (data:image/png;base64,...) or an http(s) URL")
		}
		var err error
		if b, err = base64.StdEncoding.DecodeString(data); err != nil {
			return imageRef{}, badRequest(param, "the data URL is not valid base64: %v", err)
		}
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return imageRef{}, badRequest(param, "the image cannot be read (PNG or JPEG): %v", err)
	}
	h := fnv.New64a()
	h.Write(b)
	return imageRef{hash: h.Sum64(), w: cfg.Width, h: cfg.Height}, nil
}

// EncoderCache is the images a model encoded lately, by content: vLLM
// keeps encoder outputs for reuse. It holds at most maxEncoded.
type EncoderCache struct {
	mu    sync.Mutex
	seen  map[uint64]struct{}
	order []uint64
	next  int
}

const maxEncoded = 1024

// hit reports whether image h was encoded lately, and marks it.
func (c *EncoderCache) hit(h uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[h]; ok {
		return true
	}
	if c.seen == nil {
		c.seen = map[uint64]struct{}{}
	}
	if len(c.order) < maxEncoded {
		c.order = append(c.order, h)
	} else {
		delete(c.seen, c.order[c.next])
		c.order[c.next] = h
		c.next = (c.next + 1) % maxEncoded
	}
	c.seen[h] = struct{}{}
	return false
}

// WithImages adds a request's images to its plan: their tokens (ids from
// their content, so the same image is the same prefix), the encoder's
// work on those not in the cache, and the context checked again.
func WithImages(plan *Plan, imgs *Images, v *VisionSpec, cache *EncoderCache, fetch Fetch, maxTokens *int, contextLength int) error {
	for i, raw := range imgs.Raws {
		im, err := imageOf(raw, imgs.Params[i]+".image_url", fetch)
		if err != nil {
			return err
		}
		n := v.Tokens(im.w, im.h)
		// Refused before anything is kept per token: an image header may
		// claim any size (a 193-byte PNG of 10^12 pixels).
		if err := content.CheckContext(plan.PromptTokens+n, maxTokens, contextLength); err != nil {
			return err
		}
		plan.PromptTokens += n
		if plan.PromptIDs != nil {
			for k := range n {
				plan.PromptIDs = append(plan.PromptIDs, im.hash+uint64(k)*0x9e3779b97f4a7c15)
			}
		}
		if !cache.hit(im.hash) {
			plan.EncoderFLOPs += v.encoderFLOPs(n)
		}
	}
	return content.CheckContext(plan.PromptTokens, maxTokens, contextLength)
}

// Images are a request's image parts as sent, and where each was: read
// only once the model is known to take Images (an error for one that
// takes none names the first part's type).
type Images struct {
	Raws   []json.RawMessage
	Params []string
}

func (i *Images) Add(raw json.RawMessage, param string) {
	i.Raws = append(i.Raws, raw)
	i.Params = append(i.Params, param)
}

// AddImages is withImages for images given as their URLs (data URLs), as
// knee predict has them: the plan's prompt and encoder work grow as knee
// sim's would. It fetches no URL.
func AddImages(plan *Plan, urls []string, v *VisionSpec, cache *EncoderCache, maxTokens *int, contextLength int) error {
	imgs := &Images{}
	for i, u := range urls {
		raw, _ := json.Marshal(map[string]string{"url": u})
		imgs.Add(raw, fmt.Sprintf("image %d", i))
	}
	return WithImages(plan, imgs, v, cache, nil, maxTokens, contextLength)
}
