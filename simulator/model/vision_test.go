package model

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"image"
	"image/png"
	"testing"
)

// hugePNG is a valid PNG header claiming w×h pixels: a few hundred
// bytes that decode as any size.
func hugePNG(t *testing.T, w, h uint32) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	p := b.Bytes()
	// IHDR's data starts at 16: width, height; its CRC follows the 13
	// bytes of data, over the type and the data.
	binary.BigEndian.PutUint32(p[16:], w)
	binary.BigEndian.PutUint32(p[20:], h)
	binary.BigEndian.PutUint32(p[29:], crc32.ChecksumIEEE(p[12:29]))
	return p
}

// TestHugeImageRefusedBeforeItsTokens: an image header claiming 10^12
// pixels is refused by the context check before a token of it is kept:
// it cost a gigabyte a request, and a few requests killed knee sim.
func TestHugeImageRefusedBeforeItsTokens(t *testing.T) {
	v := VisionFamilies["qwen2-vl"]
	raw, _ := json.Marshal(map[string]string{"url": "data:image/png;base64," + base64.StdEncoding.EncodeToString(hugePNG(t, 1_000_000, 1_000_000))})
	imgs := &Images{}
	imgs.Add(raw, "messages[0].content[1]")
	plan := &Plan{PromptTokens: 10, PromptIDs: make([]uint64, 10)}
	err := WithImages(plan, imgs, &v, &EncoderCache{}, nil, nil, 32768)
	if err == nil || len(plan.PromptIDs) != 10 || plan.PromptTokens != 10 {
		t.Errorf("err %v, %d ids kept, %d prompt tokens; want a refusal with nothing kept", err, len(plan.PromptIDs), plan.PromptTokens)
	}
}

// FuzzImageHeader: any bytes sent as an image are read without a panic,
// and an image is kept only when its tokens fit the context: nothing per
// token is stored for one that does not (issue 56).
func FuzzImageHeader(f *testing.F) {
	var b bytes.Buffer
	png.Encode(&b, image.NewGray(image.Rect(0, 0, 3, 2)))
	f.Add(b.Bytes())
	f.Add([]byte("\xff\xd8\xff\xc0\x00\x11\x08\xff\xff\xff\xff\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01"))
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x7f\xff\xff\xff\x7f\xff\xff\xff\x08\x02\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, img []byte) {
		for _, family := range []string{"qwen2-vl", "gemma-3"} {
			v := VisionFamilies[family]
			raw, _ := json.Marshal(map[string]string{"url": "data:image/png;base64," + base64.StdEncoding.EncodeToString(img)})
			imgs := &Images{}
			imgs.Add(raw, "messages[0].content[1]")
			plan := &Plan{PromptTokens: 10, PromptIDs: make([]uint64, 10)}
			err := WithImages(plan, imgs, &v, &EncoderCache{}, nil, nil, 32768)
			if len(plan.PromptIDs) != plan.PromptTokens || plan.PromptTokens > 32768 || plan.PromptTokens < 10 {
				t.Fatalf("%s: %d ids, %d tokens (err %v)", family, len(plan.PromptIDs), plan.PromptTokens, err)
			}
			if err != nil && plan.PromptTokens != 10 {
				t.Fatalf("%s: refused (%v) but kept %d tokens", family, err, plan.PromptTokens-10)
			}
		}
	})
}
