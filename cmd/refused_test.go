package cmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRefusedWarmupStopsTheRun: a server that refuses every request with
// vLLM's 400 body stops a 30 s run at its warm-up: knee exits non-zero
// with the server's own sentence and the flag behind it, having sent a
// handful of requests, not the window's sixty.
func TestRefusedWarmupStopsTheRun(t *testing.T) {
	inBubble(t, testRefusedWarmupStopsTheRun)
}

func testRefusedWarmupStopsTheRun(t *testing.T) {
	const said = "The model vl is not a multimodal model: it takes no images"
	var asked atomic.Int64
	url := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"vl","object":"model"}]}`)
			return
		}
		asked.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"object":"error","message":%q,"type":"BadRequestError","param":null,"code":400}`, said)
	}))
	code, out, errOut := execute(t, "run", "--base-url", url+"/v1", "--rate", "2", "--duration", "30s",
		"--image-count", "1", "--output", t.TempDir()+"/r.json", "--quiet")
	if code == 0 || !strings.Contains(errOut, said) || !strings.Contains(errOut, "--image-count") {
		t.Fatalf("exit %d; the server's words and the flag should be named:\n%s\n%s", code, out, errOut)
	}
	if n := asked.Load(); n > 10 {
		t.Errorf("%d requests sent after the warm-up was refused whole", n)
	}
}

// TestSignalDuringAHungResetIsAnInterruption: a signal while the first
// --reset-cache waits on a server that never answers ends the command as
// an interruption (130), not as a failure to run (3).
func TestSignalDuringAHungResetIsAnInterruption(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		url := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/models") {
				fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
				return
			}
			<-r.Context().Done() // the reset hangs
		}))
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		code, _, errOut := executeCtx(t, ctx, "run", "--base-url", url+"/v1", "--rate", "2", "--duration", "10s", "--reset-cache", "--no-server-metrics")
		if code != ExitInterrupted {
			t.Errorf("exit %d, want %d: %s", code, ExitInterrupted, errOut)
		}
	})
}
