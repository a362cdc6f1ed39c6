package workload

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Images in datasets. A record names its images as LLaVA's and
// ShareGPT-4V's files do ("image": a path, or a list of paths), as
// AIPerf's single_turn does ("images": a list), or as OpenAI content
// parts inside a message (image_url, input_image). The references are
// kept as written: a path, a URL or a data URL; bench resolves paths
// against the image directory and reads them before the first request.

// maxImagesPerMessage bounds what one message may carry, as
// --image-count is bounded.
const maxImagesPerMessage = 64

// imageTag is LLaVA's placeholder for where an image goes in the text.
// Sent over the OpenAI API the image is a content part of its own, so
// the placeholder is taken out rather than sent as text (where it would
// cost tokens no real client sends).
const imageTag = "<image>"

// stripImageTags takes LLaVA's "<image>" placeholders, and the line
// break that follows one, out of a turn's text.
func stripImageTags(s string) string {
	if !strings.Contains(s, imageTag) {
		return s
	}
	s = strings.ReplaceAll(s, imageTag+"\n", "")
	s = strings.ReplaceAll(s, "\n"+imageTag, "")
	return strings.TrimSpace(strings.ReplaceAll(s, imageTag, ""))
}

// imagesOf reads a record's image keys: "image" (a reference or a list
// of them) and "images" (a list of references, or of {"url"} or
// {"path"} objects). A key given twice in a record is an error, not a
// choice knee makes silently.
func imagesOf(keys map[string]json.RawMessage, errorf func(string, ...any) error) ([]string, error) {
	var out []string
	for _, k := range []string{"image", "images"} {
		raw, ok := keys[k]
		if !ok || string(raw) == "null" {
			continue
		}
		if out != nil {
			return nil, errorf(`both "image" and "images": give one`)
		}
		refs, err := imageRefs(raw)
		if err != nil {
			return nil, errorf("%q: %v", k, err)
		}
		out = refs
	}
	if len(out) > maxImagesPerMessage {
		return nil, errorf("%d images is more than %d a message", len(out), maxImagesPerMessage)
	}
	return out, nil
}

// imageRefs reads one reference or a list of them; an entry may be a
// string or an object naming it as "url", "path" or "image_url".
func imageRefs(raw json.RawMessage) ([]string, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, fmt.Errorf("an empty image reference")
		}
		return []string{one}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("must be a path or URL, or a list of them")
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		ref, ok := imageRef(item)
		if !ok || ref == "" {
			return nil, fmt.Errorf("[%d] is no image path or URL", i)
		}
		out = append(out, ref)
	}
	return out, nil
}

// imageRef reads a string, or an object's "url", "path" or "image_url"
// (itself a string or {"url"}).
func imageRef(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var obj struct {
		URL      string          `json:"url"`
		Path     string          `json:"path"`
		ImageURL json.RawMessage `json:"image_url"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return "", false
	}
	switch {
	case obj.URL != "":
		return obj.URL, true
	case obj.Path != "":
		return obj.Path, true
	case len(obj.ImageURL) > 0:
		return imageRef(obj.ImageURL)
	}
	return "", false
}

// withImages puts refs on the first user message of msgs (a record's
// images go with its question).
func withImages(msgs []Message, refs []string) []Message {
	if len(refs) == 0 {
		return msgs
	}
	for i := range msgs {
		if msgs[i].Role == "user" {
			msgs[i].Images = append(msgs[i].Images, refs...)
			break
		}
	}
	return msgs
}

// ImageRefs calls f on every image reference of the dataset's entries
// and conversations, replacing each with what f returns; the first error
// stops it.
func (p *ParsedDataset) ImageRefs(f func(ref string, line int) (string, error)) error {
	fix := func(msgs []Message, line int) error {
		for i := range msgs {
			for k, ref := range msgs[i].Images {
				v, err := f(ref, line)
				if err != nil {
					return err
				}
				msgs[i].Images[k] = v
			}
		}
		return nil
	}
	for i := range p.Entries {
		if err := fix(p.Entries[i].Messages, p.Entries[i].Line); err != nil {
			return err
		}
	}
	for i := range p.Conversations {
		c := &p.Conversations[i]
		for k := range c.Turns {
			for j, ref := range c.Turns[k].Images {
				v, err := f(ref, c.Line)
				if err != nil {
					return err
				}
				c.Turns[k].Images[j] = v
			}
		}
	}
	return nil
}

// HasImages reports whether any entry or conversation carries an image.
func (p *ParsedDataset) HasImages() bool {
	found := false
	_ = p.ImageRefs(func(ref string, _ int) (string, error) {
		found = true
		return ref, nil
	})
	return found
}
