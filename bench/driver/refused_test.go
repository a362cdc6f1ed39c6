package driver

import (
	"errors"
	"strings"
	"testing"

	"github.com/kneebench/knee/bench/record"
)

// TestRefusedWarmup: a warm-up every request of which the server refused
// with a client error stops the level in the server's words, with the
// likely flag; a warm-up with any other outcome, or refused by a rate
// limit or a timeout, does not.
func TestRefusedWarmup(t *testing.T) {
	const vision = "The model m is not a multimodal model: it takes no images"
	for _, tc := range []struct {
		name     string
		statuses []int
		stop     bool
		flag     string
	}{
		{"all refused", []int{400, 400, 400}, true, "--image-count"},
		{"one answered", []int{400, 200, 400}, false, ""},
		{"rate limited", []int{429, 429}, false, ""},
		{"timed out", []int{408}, false, ""},
		{"unauthorised", []int{401}, true, "--api-key"},
		{"not implemented", []int{501}, true, "--image-count"},
		{"a server error", []int{500}, false, ""},
		{"a server error saying what is not supported", []int{502}, true, "--image-count"},
		{"none", nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w refusals
			for _, s := range tc.statuses {
				rec := &record.Record{Status: s}
				switch {
				case s == 401:
					rec.Class, rec.Message = "http_401:authentication_error", "bad key"
				case s == 502:
					rec.Class, rec.Message = "http_500:server_error", "image input is not supported - hint: you may need to provide the mmproj"
				case s >= 400:
					rec.Class, rec.Message = "http_400:invalid_request_error", vision
				}
				w.add(rec)
			}
			err := w.err()
			var re *RefusedError
			if (err != nil) != tc.stop || (tc.stop && !errors.As(err, &re)) {
				t.Fatalf("err %v, want a stop %v", err, tc.stop)
			}
			if tc.stop && (!strings.Contains(err.Error(), tc.flag) || re.Requests != len(tc.statuses)) {
				t.Errorf("%v: want the flag %s and %d requests", err, tc.flag, len(tc.statuses))
			}
			if tc.stop && tc.flag == "--image-count" && tc.statuses[0] == 400 && !strings.Contains(err.Error(), vision) {
				t.Errorf("%v: the server's own words are missing", err)
			}
		})
	}
}

// TestLikelyFlag: a 404 that names a model points at --model, one that
// names none (a path the server does not serve) at --endpoint.
func TestLikelyFlag(t *testing.T) {
	for _, c := range []struct{ class, message, want string }{
		{"http_404:not_found_error", "File Not Found", "--endpoint"},
		{"http_404:NotFound", `{"detail":"Not Found"}`, "--endpoint"},
		{"http_404:NotFoundError", "The model `x` does not exist.", "--model"},
		{"http_400:BadRequestError", "This model's maximum context length is 4096 tokens", "--input-tokens"},
		{"http_501:not_supported_error", "This server does not support embeddings. Start it with `--embeddings`", "--endpoint"},
		{"http_400:BadRequestError", "This model does not support tools", "--tools"},
	} {
		if got := likelyFlag(c.class, c.message); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s %q: %q, want %s", c.class, c.message, got, c.want)
		}
	}
}
