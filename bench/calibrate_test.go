package bench

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/bench/internal/fakeserver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/workload"
)

// wordServer counts a prompt as its words plus a chat template of five
// tokens, as a server reporting usage.prompt_tokens would.
type wordServer struct{}

func (wordServer) Probe(r *workload.Request, rec *record.Record) {
	n := 5
	for _, m := range r.Messages {
		n += len(strings.Fields(m.Content))
	}
	rec.PromptTokens, rec.UsageReported = n, true
}

// TestSizedPromptsWithSpread: with lengths spread around the asked size,
// the prompts are still sized for the asked mean; the probe is of the
// asked size, not of one random draw (which once shifted a 1024 ± 350
// workload to a mean of 851).
func TestSizedPromptsWithSpread(t *testing.T) {
	for _, sp := range []workload.Spread{{}, {InputStddev: 350}, {RangeRatio: 0.6}} {
		syn := workload.Synthetic{Tokens: 1024, MaxTokens: 8, Seed: 7, Nonce: "[n]", Spread: sp}
		fit, _ := SizedPrompts(wordServer{}, Calibrate(wordServer{}), syn)
		sum := 0
		const n = 2000
		for i := range n {
			rec := &record.Record{}
			req := fit.Request(i)
			wordServer{}.Probe(&req, rec)
			sum += rec.PromptTokens
		}
		if mean := float64(sum) / n; mean < 1024*0.98 || mean > 1024*1.02 {
			t.Errorf("spread %+v: the server counts a mean of %.1f prompt tokens, asked 1024", sp, mean)
		}
	}
}

// TestProbeRetries: a probe that meets a transient error (a pod's server
// still warming: 503) is retried as the run's requests are, so the run's
// calibration does not end on it.
func TestProbeRetries(t *testing.T) {
	quiet.Wire(t, func() { testProbeRetries(t) })
}

func testProbeRetries(t *testing.T) {
	var calls atomic.Int64
	ok := &fakeserver.Stream{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 2}
	url := fakeserver.Start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, `{"error":{"message":"warming up"}}`, http.StatusServiceUnavailable)
			return
		}
		ok.ServeHTTP(w, r)
	}))
	c, err := transport.NewClient(transport.Target{BaseURL: url, Model: "m", Timeout: 5 * time.Second, Retries: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var rec record.Record
	c.Probe(&workload.Request{Prompt: "hi", MaxTokens: 2}, &rec)
	if rec.Class != "" || rec.Attempts != 2 || rec.FirstClass != "http_503" {
		t.Errorf("probe: class %q after %d attempts (first %q), want success on the second", rec.Class, rec.Attempts, rec.FirstClass)
	}
}

// costlyWords counts a word as one to four tokens by its length, as a
// tokenizer of a small vocabulary does (2.56 tokens a word on the tiny
// model of the llama.cpp recipe), so random words vary widely in cost.
type costlyWords struct{}

func (costlyWords) Count(text string) int {
	n := 0
	for _, w := range strings.Fields(text) {
		n += 1 + len(w)%4
	}
	return n
}

// TestSizedPromptsOnAWideVocabulary: where filler words cost one to four
// tokens each, prompts sized by probes alone still average the asked
// length within 3% (or two tokens) at 64, 512 and 2,048 tokens, over a
// run's requests and each sweep level's (the nonce), as the server counts
// them with its template. Before, a sweep level of 64-token prompts
// averaged 23% short on llama-server.
func TestSizedPromptsOnAWideVocabulary(t *testing.T) {
	server := tokenServer{tok: costlyWords{}, template: 9}
	for k, want := range []int{64, 512, 2048, 64, 64, 64, 100} {
		syn := workload.Synthetic{Tokens: want, MaxTokens: 8, Seed: uint64(11 + k), Nonce: "[level 0]"}
		fit, note := SizedPrompts(server, Calibrate(server), syn)
		for _, nonce := range []string{"[level 0]", "[level 1]", "[level 2]"} {
			fit.Nonce = nonce
			sum := 0
			const n = 50
			for i := range n {
				req := fit.Request(i)
				var rec record.Record
				server.Probe(&req, &rec)
				sum += rec.PromptTokens
			}
			mean := float64(sum) / n
			if miss := mean - float64(want); miss > max(2, 0.03*float64(want)) || -miss > max(2, 0.03*float64(want)) {
				t.Errorf("%d tokens, %s: the server counts a mean of %.1f (%s)", want, nonce, mean, note)
			}
		}
	}
}

// smallServer is wordServer with a 300-token limit, as an embedding
// model of 512 tokens, or llama-server's 512-token batch, refuses more.
type smallServer struct{}

func (smallServer) Probe(r *workload.Request, rec *record.Record) {
	wordServer{}.Probe(r, rec)
	if rec.PromptTokens > 300 {
		*rec = record.Record{Class: "http_500:server_error", Message: "input is too large to process"}
	}
}

// TestCalibrateOnASmallModel: a server that refuses the 512-word probe
// is calibrated with 128 words instead, not left uncalibrated.
func TestCalibrateOnASmallModel(t *testing.T) {
	c := Calibrate(smallServer{})
	if !c.OK || c.Words != 128 || c.WordsPerToken != 1 {
		t.Errorf("calibration %+v; want 128 words at one word a token", c)
	}
}

// countlessServer is wordServer whose answers in turn come whole without
// the prompt's count, as llama-server's /v1/messages answers do when
// their one token streams no text, are refused (429), as a server
// injecting failures refuses them, and are counted.
type countlessServer struct{ n *int }

func (s countlessServer) Probe(r *workload.Request, rec *record.Record) {
	switch *s.n++; *s.n % 3 {
	case 1:
		rec.UsageReported, rec.CompletionTokens = true, 1
	case 2:
		rec.Status, rec.Class = 429, "http_429:RateLimitError"
	default:
		wordServer{}.Probe(r, rec)
	}
}

// TestProbesWithoutACountAskAgain: a probe answered without the prompt's
// count, or refused, is sent again, so neither the calibration nor the
// fit of the prompt's shape is lost to it.
func TestProbesWithoutACountAskAgain(t *testing.T) {
	var n int
	s := countlessServer{&n}
	cal := Calibrate(s)
	if !cal.OK {
		t.Fatalf("calibration lost: %s", cal.Note)
	}
	_, note := SizedPrompts(s, cal, workload.Synthetic{Tokens: 256, MaxTokens: 8, Seed: 7, Nonce: "[n]"})
	if !strings.Contains(note, "a fit of 3 probes") {
		t.Errorf("the prompt's shape not fitted: %s", note)
	}
}

// curvedServer counts a prompt as its words, a chat template of five
// tokens and one more token every 64 words past the first 512, so a
// straight line through three probes misses and the correction matters.
type curvedServer struct{}

func (curvedServer) Probe(r *workload.Request, rec *record.Record) {
	n := 5
	for _, m := range r.Messages {
		n += len(strings.Fields(m.Content))
	}
	rec.PromptTokens, rec.UsageReported = n+max(n-512, 0)/64, true
}

// TestSizedPromptsNoteTheCorrectedProbe: when the fitted size misses and
// is corrected, the note reports the probe of the corrected prompts, not
// the miss before it.
func TestSizedPromptsNoteTheCorrectedProbe(t *testing.T) {
	syn := workload.Synthetic{Tokens: 1024, MaxTokens: 8, Seed: 7, Nonce: "[n]",
		Spread: workload.Spread{InputStddev: 100}}
	fit, note := SizedPrompts(curvedServer{}, Calibrate(curvedServer{}), syn)
	at := fit
	at.Spread = workload.Spread{}
	req := at.Request(0)
	rec := &record.Record{}
	curvedServer{}.Probe(&req, rec)
	want := "counted " + strconv.Itoa(rec.PromptTokens) + " ("
	if !strings.Contains(note, want) {
		t.Errorf("the corrected prompts count %d; the note says %q", rec.PromptTokens, note)
	}
}
