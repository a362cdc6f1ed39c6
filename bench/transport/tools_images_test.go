package transport

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kneebench/knee/workload"
	"github.com/kneebench/knee/workload/kind"
)

// TestImageParts: a message with images goes as content parts, its text
// first: image_url parts in chat, input_image parts in the Responses
// API; the record counts the images, their bytes and the body's.
func TestImageParts(t *testing.T) {
	msg := workload.Message{Role: "user", Content: "what is this?", Images: []string{"data:image/png;base64,AAAA", "data:image/png;base64,BBBB"}}
	for ep, want := range map[Endpoint]string{
		kind.Name("chat"):      `"content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},{"type":"image_url","image_url":{"url":"data:image/png;base64,BBBB"}}]`,
		kind.Name("responses"): `"content":[{"type":"input_text","text":"what is this?"},{"type":"input_image","image_url":"data:image/png;base64,AAAA"},{"type":"input_image","image_url":"data:image/png;base64,BBBB"}]`,
	} {
		c, err := NewClient(Target{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Endpoint: ep}, 1)
		if err != nil {
			t.Fatal(err)
		}
		body := c.appendBody(nil, &workload.Request{Messages: []workload.Message{msg}})
		if !json.Valid(body) || !strings.Contains(string(body), want) {
			t.Errorf("%s: %s\nwant %s", ep, body, want)
		}
	}
}
