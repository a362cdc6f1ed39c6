package transport

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/kneebench/knee/bench/record"
)

// maxUnstreamedBytes bounds a completion answered whole instead of
// streamed.
const maxUnstreamedBytes = 16 << 20

// readUnstreamed handles a 200 answer that is a plain JSON completion
// rather than a stream: the whole answer counts as one chunk. size is
// its length as the server gave it (-1: not given).
func (c *Client) readUnstreamed(body io.Reader, size int, rec *record.Record, fail func(string, error), keepText bool) {
	b, release, err := c.readWhole(body, size, maxUnstreamedBytes)
	defer release()
	if err != nil {
		fail(c.wholeClass(err, rec), err)
		return
	}
	var v struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			Text string `json:"text"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens        int `json:"prompt_tokens"`
			CompletionTokens    int `json:"completion_tokens"`
			PromptTokensDetails *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &v); err != nil || len(v.Choices) == 0 {
		var resp struct {
			Object string `json:"object"`
		}
		if json.Unmarshal(b, &resp) == nil && resp.Object == "response" {
			// A whole Responses API object: the server ignored stream.
			rec.Class, rec.Message = record.ClassNotStreamed, "the server answered the streaming request with one whole Responses API object"
			return
		}
		fail(record.ClassMalformed, fmt.Errorf("response is neither an event stream nor a completion: %.80q", b))
		return
	}
	t := c.Now()
	rec.FirstToken, rec.LastToken, rec.Chunks = t, t, 1
	rec.ChunkTimes = append(rec.ChunkTimes, t)
	// knee asked for a stream: a whole answer at once has no first token
	// to time, so it is not a success to average in.
	rec.Class, rec.Message = record.ClassNotStreamed, "the server answered the streaming request with one plain JSON completion"
	if keepText {
		rec.Text = append(rec.Text, v.Choices[0].Message.Content...)
		rec.Text = append(rec.Text, v.Choices[0].Text...)
	}
	if u := v.Usage; u != nil {
		rec.UsageReported = true
		rec.PromptTokens, rec.CompletionTokens = u.PromptTokens, u.CompletionTokens
		if u.PromptTokensDetails != nil {
			rec.CachedReported = true
			rec.CachedTokens = u.PromptTokensDetails.CachedTokens
		}
	}
}
