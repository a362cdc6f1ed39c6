package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDisconnectFreesBlocks: clients that hang up mid-stream free their KV
// blocks; once they are gone, KV-cache usage is back to zero.
func TestDisconnectFreesBlocks(t *testing.T) {
	t.Parallel()
	inBubble(t, testDisconnectFreesBlocks)
}

func testDisconnectFreesBlocks(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			body := fmt.Sprintf(`{"model":"sched","max_tokens":5000,"ignore_eos":true,"stream":true,"messages":[{"role":"user","content":"client %d %s"}]}`, i, strings.Repeat("x ", 300))
			req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/chat/completions", strings.NewReader(body))
			resp, err := client(t).Do(req)
			if err == nil {
				buf := make([]byte, 4096)
				for {
					if _, err := resp.Body.Read(buf); err != nil {
						break
					}
				}
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		st := ts.models["sched"].sched.State()
		if st.KVUsage == 0 && st.Running == 0 && st.Waiting == 0 {
			s := summaryOf(t, ts, "sched")
			if s.Requests.Finished["abort"] != 8 {
				t.Errorf("finished %v, want 8 aborts", s.Requests.Finished)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("KV usage still %v after the clients left", ts.models["sched"].sched.State())
}

// TestSchedulerPrefixHitOverHTTP: the second turn of a conversation
// reports the first turn's prompt as cached tokens.
func TestSchedulerPrefixHitOverHTTP(t *testing.T) {
	t.Parallel()
	inBubble(t, testSchedulerPrefixHitOverHTTP)
}

func testSchedulerPrefixHitOverHTTP(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	system := strings.Repeat("You are a patient assistant. ", 60)
	turn1 := fmt.Sprintf(`{"model":"sched","max_tokens":8,"messages":[{"role":"system","content":%q},{"role":"user","content":"hello"}]}`, system)
	_, b := post(t, ts.URL+"/v1/chat/completions", turn1)
	var r1 struct {
		Choices []struct{ Message struct{ Content string } }
		Usage   struct {
			PromptTokens        int `json:"prompt_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		}
	}
	if err := jsonUnmarshal(b, &r1); err != nil {
		t.Fatal(err, string(b))
	}
	turn2 := fmt.Sprintf(`{"model":"sched","max_tokens":8,"messages":[{"role":"system","content":%q},{"role":"user","content":"hello"},{"role":"assistant","content":%q},{"role":"user","content":"and then?"}]}`,
		system, r1.Choices[0].Message.Content)
	_, b = post(t, ts.URL+"/v1/chat/completions", turn2)
	var r2 = r1
	if err := jsonUnmarshal(b, &r2); err != nil {
		t.Fatal(err)
	}
	if min := r1.Usage.PromptTokens - 16; r2.Usage.PromptTokensDetails.CachedTokens < min {
		t.Errorf("turn 2 cached %d of %d, want at least %d (turn 1's prompt less a block)",
			r2.Usage.PromptTokensDetails.CachedTokens, r2.Usage.PromptTokens, min)
	}
}
