package server

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestResetPrefixCacheOverHTTP: knee sim's POST /reset_prefix_cache
// (vLLM's name) and POST /flush_cache (SGLang's) make a repeated prompt
// find nothing cached, and a reset while a request streams is refused
// with 409 naming the model.
func TestResetPrefixCacheOverHTTP(t *testing.T) {
	t.Parallel()
	inBubble(t, testResetPrefixCacheOverHTTP)
}

func testResetPrefixCacheOverHTTP(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	system := strings.Repeat("You are a patient assistant. ", 60)
	body := fmt.Sprintf(`{"model":"sched","max_tokens":4,"messages":[{"role":"system","content":%q},{"role":"user","content":"hello"}]}`, system)
	cached := func() int {
		_, b := post(t, ts.URL+"/v1/chat/completions", body)
		var r struct {
			Usage struct {
				PromptTokensDetails struct {
					CachedTokens int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			}
		}
		if err := jsonUnmarshal(b, &r); err != nil {
			t.Fatal(err, string(b))
		}
		return r.Usage.PromptTokensDetails.CachedTokens
	}
	for _, path := range []string{"/reset_prefix_cache", "/flush_cache"} {
		cached()
		if c := cached(); c == 0 {
			t.Fatalf("%s: a repeated prompt hit nothing before the reset", path)
		}
		if code, b := post(t, ts.URL+path, ""); code != 200 || !strings.Contains(string(b), `"sched"`) {
			t.Fatalf("%s: %d %s", path, code, b)
		}
		if c := cached(); c != 0 {
			t.Errorf("%s: after the reset the prompt hit %d tokens, want 0", path, c)
		}
	}

	// A stream in flight holds blocks: the reset is refused.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := fmt.Sprintf(`{"model":"sched","max_tokens":4000,"stream":true,"ignore_eos":true,"messages":[{"role":"user","content":%q}]}`, system)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/chat/completions", strings.NewReader(stream))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "data:") {
	}
	// The first chunk may leave before the engine has taken the request
	// in: wait until it holds blocks.
	for deadline := time.Now().Add(10 * time.Second); ts.models["sched"].sched.State().UsedBlocks == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the stream never held a KV block")
		}
		time.Sleep(time.Millisecond)
	}
	code, b := post(t, ts.URL+"/reset_prefix_cache", "")
	if code != 409 || !strings.Contains(string(b), "model sched") || !strings.Contains(string(b), "in use") {
		t.Errorf("a reset during a stream: %d %s; want 409 naming the model", code, b)
	}
}
