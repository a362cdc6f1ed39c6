package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"
)

// TestOpenAISDK drives the simulator with the official Go SDK, unchanged:
// chat and completions, streamed and not.
func TestOpenAISDK(t *testing.T) {
	t.Parallel()
	inBubble(t, testOpenAISDK)
}

func testOpenAISDK(t *testing.T) {
	ts := startSim(t, testModels, "", "secret")
	hc := client(t)
	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey("secret"), option.WithHTTPClient(hc))
	ctx := context.Background()
	for _, m := range []string{"fixed", "instant", "sched"} {
		chat, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    m,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")},
		})
		if err != nil {
			t.Fatalf("%s chat: %v", m, err)
		}
		if got := chat.Choices[0].Message.Content; !strings.Contains(got, "Hello") && !strings.Contains(got, "Hi") {
			t.Errorf("%s chat answer %q, want the greeting", m, got)
		}
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:         m,
			Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")},
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		})
		acc := openai.ChatCompletionAccumulator{}
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("%s stream: %v", m, err)
		}
		if acc.Choices[0].Message.Content != chat.Choices[0].Message.Content {
			t.Errorf("%s: streamed %q, unary %q", m, acc.Choices[0].Message.Content, chat.Choices[0].Message.Content)
		}
		if acc.Usage.CompletionTokens == 0 || acc.Usage.PromptTokens == 0 {
			t.Errorf("%s: streamed usage %+v", m, acc.Usage)
		}
		comp, err := client.Completions.New(ctx, openai.CompletionNewParams{
			Model:  openai.CompletionNewParamsModel(m),
			Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("/echo ping")},
		})
		if err != nil {
			t.Fatalf("%s completion: %v", m, err)
		}
		if comp.Choices[0].Text != "You said: /echo ping" {
			t.Errorf("%s completion %q", m, comp.Choices[0].Text)
		}
		cs := client.Completions.NewStreaming(ctx, openai.CompletionNewParams{
			Model:     openai.CompletionNewParamsModel(m),
			Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("/echo ping")},
			MaxTokens: openai.Int(3),
		})
		var text strings.Builder
		for cs.Next() {
			if c := cs.Current(); len(c.Choices) > 0 {
				text.WriteString(c.Choices[0].Text)
			}
		}
		if cs.Err() != nil || text.String() != "You said:" {
			t.Errorf("%s streamed completion %q (%v), want \"You said:\" cut at 3 tokens", m, text.String(), cs.Err())
		}
	}
	// The SDK without the key gets a 401.
	bad := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey("wrong"), option.WithMaxRetries(0), option.WithHTTPClient(hc))
	_, err := bad.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "fixed", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var apiErr *openai.Error
	if !errorsAs(err, &apiErr) || apiErr.StatusCode != 401 {
		t.Errorf("wrong key: err %v, want a 401", err)
	}
}

func errorsAs(err error, target **openai.Error) bool {
	e, ok := err.(*openai.Error)
	if ok {
		*target = e
	}
	return ok
}

// TestMetricsExposition parses /metrics with Prometheus's own parser and
// checks vLLM's names, labels and buckets.
func TestMetricsExposition(t *testing.T) {
	t.Parallel()
	inBubble(t, testMetricsExposition)
}

func testMetricsExposition(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	for _, m := range []string{"fixed", "sched"} {
		post(t, ts.URL+"/v1/chat/completions", `{"model":"`+m+`","messages":[{"role":"user","content":"hello"}],"stream":true}`)
	}
	_, body := get(t, ts.URL+"/metrics")
	parser := expfmt.NewTextParser(pmodel.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("Prometheus parser: %v", err)
	}
	// vLLM's published boundaries (vllm/v1/metrics), written out here so
	// the test checks them against vLLM, not against the simulator itself.
	var (
		bucketsTTFT = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
		bucketsITL  = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
		bucketsReq  = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
		bucketsIter = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
		bucketsPre  = []float64{1, 2, 3, 4, 5, 10, 20}
		bucketsLag  = []float64{0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	)
	want := map[string][]float64{
		"vllm:time_to_first_token_seconds":           bucketsTTFT,
		"vllm:inter_token_latency_seconds":           bucketsITL,
		"vllm:request_time_per_output_token_seconds": bucketsITL,
		"vllm:e2e_request_latency_seconds":           bucketsReq,
		"vllm:request_queue_time_seconds":            bucketsReq,
		"vllm:request_prefill_time_seconds":          bucketsReq,
		"vllm:request_decode_time_seconds":           bucketsReq,
		"vllm:iteration_tokens_total":                bucketsIter,
		"vllm:request_num_preemptions":               bucketsPre,
		"knee_sim_token_lag_seconds":                 bucketsLag,
	}
	for name, buckets := range want {
		f := families[name]
		if f == nil {
			t.Errorf("missing %s", name)
			continue
		}
		h := f.Metric[0].GetHistogram()
		// The text format adds the +Inf bucket.
		if h == nil || len(h.Bucket) != len(buckets)+1 || !math.IsInf(h.Bucket[len(buckets)].GetUpperBound(), 1) {
			t.Errorf("%s: %d buckets, want %d and +Inf", name, len(h.GetBucket()), len(buckets))
			continue
		}
		for i, b := range h.Bucket[:len(buckets)] {
			if b.GetUpperBound() != buckets[i] {
				t.Errorf("%s bucket %d = %v, want %v", name, i, b.GetUpperBound(), buckets[i])
			}
		}
		labels := map[string]string{}
		for _, l := range f.Metric[0].Label {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["model_name"] == "" || labels["engine"] != "0" {
			t.Errorf("%s labels %v, want model_name and engine", name, labels)
		}
	}
	for _, name := range []string{"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:request_success_total",
		"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:num_preemptions_total",
		"vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total", "vllm:request_prefill_kv_computed_tokens"} {
		if families[name] == nil {
			t.Errorf("missing %s", name)
		}
	}
	reasons := map[string]bool{}
	for _, m := range families["vllm:request_success_total"].Metric {
		for _, l := range m.Label {
			if l.GetName() == "finished_reason" {
				reasons[l.GetValue()] = true
			}
		}
	}
	if !reasons["stop"] || !reasons["length"] || !reasons["abort"] {
		t.Errorf("finished_reason labels %v, want stop, length and abort pre-created", reasons)
	}
}

// TestDeterministicAnswers: the same request gives the same bytes across
// restarts; a request seed changes the variant; max_tokens truncates.
func TestDeterministicAnswers(t *testing.T) {
	t.Parallel()
	inBubble(t, testDeterministicAnswers)
}

func testDeterministicAnswers(t *testing.T) {
	ask := func(ts *testServer, body string) string {
		_, b := post(t, ts.URL+"/v1/chat/completions", body)
		var v struct {
			Choices []struct {
				Message      struct{ Content string }
				FinishReason string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal(b, &v); err != nil || len(v.Choices) == 0 {
			t.Fatalf("bad answer %s", b)
		}
		return v.Choices[0].Message.Content + "|" + v.Choices[0].FinishReason
	}
	body := `{"model":"instant","messages":[{"role":"user","content":"What's the weather in Lisbon?"}]}`
	a := ask(startSim(t, testModels, "", ""), body)
	b := ask(startSim(t, testModels, "", ""), body)
	if a != b {
		t.Errorf("restart changed the answer: %q vs %q", a, b)
	}
	variants := map[string]bool{}
	for seed := 0; seed < 8; seed++ {
		variants[ask(startSim(t, testModels, "", ""), fmt.Sprintf(`{"model":"instant","seed":%d,"messages":[{"role":"user","content":"What's the weather in Lisbon?"}]}`, seed))] = true
	}
	if len(variants) < 2 {
		t.Errorf("8 seeds gave %d variant(s), want both", len(variants))
	}
	ts := startSim(t, testModels, "", "")
	if got := ask(ts, `{"model":"instant","max_tokens":3,"messages":[{"role":"user","content":"who are you"}]}`); got != "I'm instant|length" {
		t.Errorf("max_tokens 3 gave %q", got)
	}
	if got := ask(ts, `{"model":"instant","stop":[","],"messages":[{"role":"user","content":"who are you"}]}`); got != "I'm instant|stop" {
		t.Errorf("stop gave %q", got)
	}
	got := ask(ts, `{"model":"instant","max_tokens":50,"ignore_eos":true,"messages":[{"role":"user","content":"hello"}]}`)
	if n := CountTokens(strings.Split(got, "|")[0]); n != 50 || !strings.HasSuffix(got, "|length") {
		t.Errorf("ignore_eos gave %d tokens (%q), want exactly 50 and length", n, got)
	}
}

// TestFixedRateTiming streams from the fixed_rate model. Predicted from the
// formula: a prompt of P tokens gets its first token at 20 ms + P/10,000 s
// and the rest every 10 ms. The summary's simulated values must match the
// formula exactly; observed values within the Go timer's ~1–2 ms overshoot
// plus loopback delivery, so +6 ms on TTFT and ±3 ms on the ITL median.
func TestFixedRateTiming(t *testing.T) {
	t.Parallel()
	inBubble(t, testFixedRateTiming)
}

func testFixedRateTiming(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	body := `{"model":"fixed","max_tokens":20,"ignore_eos":true,"stream":true,"messages":[{"role":"user","content":"hello"}]}`
	post(t, ts.URL+"/v1/chat/completions", body) // warm the connection
	_, _ = post(t, ts.URL+"/metrics/summary/reset", "")
	const n = 5
	for i := 0; i < n; i++ {
		post(t, ts.URL+"/v1/chat/completions", body)
	}
	s := summaryOf(t, ts, "fixed")
	prompt := float64(s.Tokens.Prompt) / n // hello: 1 token + 4 message overhead + 3 primer = 8
	if prompt != 8 {
		t.Fatalf("prompt tokens %v, want 8", prompt)
	}
	wantTTFT := 0.020 + 8/10000.0
	if got := s.Simulated["ttft"]; math.Abs(got.P50-wantTTFT) > 1e-12 || got.Count != n {
		t.Errorf("simulated TTFT %+v, want exactly %.6f", got, wantTTFT)
	}
	if got := s.Simulated["itl"].P50; math.Abs(got-0.010) > 1e-12 {
		t.Errorf("simulated ITL p50 %.9f, want exactly 0.010", got)
	}
	if got := s.Simulated["e2e"].Max; math.Abs(got-(wantTTFT+19*0.010)) > 1e-12 {
		t.Errorf("simulated E2E %.9f, want %.6f", got, wantTTFT+0.19)
	}
	if got := s.Server["ttft"].P50; got < wantTTFT || got > wantTTFT+0.006 {
		t.Errorf("observed TTFT p50 %.4f s, want %.4f +6 ms", got, wantTTFT)
	}
	if got := s.Server["itl"].P50; math.Abs(got-0.010) > 0.003 {
		t.Errorf("observed ITL p50 %.4f s, want 0.010 ± 3 ms", got)
	}
	if s.Lag.Count != n*20 {
		t.Errorf("lag samples %d, want one per token (%d)", s.Lag.Count, n*20)
	}
}

// TestErrors covers every error case of the API with its status and code.
func TestErrors(t *testing.T) {
	quiet.Wire(t, func() { testErrors(t) })
}

func testErrors(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	chat := ts.URL + "/v1/chat/completions"
	cases := []struct {
		name, url, body string
		status          int
		param, code     string
	}{
		{"malformed JSON", chat, `{"model":`, 400, "", ""},
		{"not an object", chat, `[1,2]`, 400, "", ""},
		{"missing model", chat, `{"messages":[{"role":"user","content":"hi"}]}`, 400, "model", ""},
		{"missing messages", chat, `{"model":"fixed"}`, 400, "messages", ""},
		{"wrong type max_tokens", chat, `{"model":"fixed","max_tokens":"ten","messages":[{"role":"user","content":"hi"}]}`, 400, "max_tokens", ""},
		{"wrong type stream", chat, `{"model":"fixed","stream":"yes","messages":[{"role":"user","content":"hi"}]}`, 400, "stream", ""},
		{"image part", chat, `{"model":"fixed","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "messages[0].content[0].type", ""},
		{"n=2", chat, `{"model":"fixed","n":2,"messages":[{"role":"user","content":"hi"}]}`, 400, "n", ""},
		{"bad role", chat, `{"model":"fixed","messages":[{"role":"robot","content":"hi"}]}`, 400, "messages[0].role", ""},
		{"unknown model", chat, `{"model":"gpt-9","messages":[{"role":"user","content":"hi"}]}`, 404, "model", "model_not_found"},
		{"context", chat, `{"model":"fixed","max_tokens":5000,"messages":[{"role":"user","content":"hi"}]}`, 400, "messages", "context_length_exceeded"},
		{"unknown route", ts.URL + "/v1/audio/speech", `{}`, 404, "", "not_found"},
		{"completions without prompt", ts.URL + "/v1/completions", `{"model":"fixed"}`, 400, "prompt", ""},
	}
	for _, tc := range cases {
		status, body := post(t, tc.url, tc.body)
		if status != tc.status {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, status, tc.status, body)
			continue
		}
		e := errorOf(t, body)
		if tc.param != "" && (e.Error.Param == nil || *e.Error.Param != tc.param) {
			t.Errorf("%s: param %v, want %q", tc.name, e.Error.Param, tc.param)
		}
		if tc.code != "" && (e.Error.Code == nil || *e.Error.Code != tc.code) {
			t.Errorf("%s: code %v, want %q", tc.name, e.Error.Code, tc.code)
		}
	}
	if status, body := get(t, chat); status != 405 {
		t.Errorf("GET on chat: %d %s, want 405", status, body)
	} else {
		errorOf(t, body)
	}
	// A body over the limit: announce 2 MiB and read the answer after its
	// first 16 KiB, as the server refuses once it has the headers and the
	// 8 KiB fasthttp reads before the handler, not after the 2 MiB.
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{%s", 2<<20, strings.Repeat(" ", 16<<10))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 413 {
		t.Errorf("2 MiB body: status %d, want 413", resp.StatusCode)
	} else {
		errorOf(t, b)
	}
}

func TestSummaryReset(t *testing.T) {
	t.Parallel()
	inBubble(t, testSummaryReset)
}

func testSummaryReset(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	post(t, ts.URL+"/v1/chat/completions", `{"model":"instant","messages":[{"role":"user","content":"hi"}]}`)
	if s := summaryOf(t, ts, "instant"); s.Requests.Total != 1 {
		t.Fatalf("total %d, want 1", s.Requests.Total)
	}
	post(t, ts.URL+"/metrics/summary/reset", "")
	if s := summaryOf(t, ts, "instant"); s.Requests.Total != 0 || s.Server["ttft"].Count != 0 {
		t.Errorf("after reset: %+v", s.Requests)
	}
}

// TestAdminFaults: faults set at run time through /admin/faults take
// effect, are counted in /metrics and the summary, and need the API key.
func TestAdminFaults(t *testing.T) {
	t.Parallel()
	inBubble(t, testAdminFaults)
}

func testAdminFaults(t *testing.T) {
	ts := startSim(t, testModels, "", "k")
	auth := []string{"Authorization", "Bearer k"}
	if status, _ := post(t, ts.URL+"/admin/faults?model=instant", `{"rules":[{"kind":"error_503","rate":1}]}`); status != 401 {
		t.Errorf("without the key: status %d, want 401", status)
	}
	if status, b := post(t, ts.URL+"/admin/faults?model=instant", `{"rules":[{"kind":"error_503","rate":1}]}`, auth...); status != 200 {
		t.Fatalf("setting faults: %d %s", status, b)
	}
	if status, b := post(t, ts.URL+"/admin/faults", `{"rules":[{"kind":"meteor","rate":1}]}`, auth...); status != 400 {
		t.Errorf("an unknown kind: %d %s, want 400", status, b)
	}
	status, body := post(t, ts.URL+"/v1/chat/completions", `{"model":"instant","messages":[{"role":"user","content":"hi"}]}`, auth...)
	if status != 503 {
		t.Fatalf("status %d %s, want the injected 503", status, body)
	}
	errorOf(t, body)
	if s := summaryOf(t, ts, "instant"); s.Faults["error_503"] != 1 {
		t.Errorf("summary faults %v, want one error_503", s.Faults)
	}
	_, metrics := get(t, ts.URL+"/metrics")
	if !strings.Contains(string(metrics), `knee_sim_faults_injected_total{engine="0",kind="error_503",model_name="instant"} 1`) {
		t.Error("the fault is not counted in /metrics")
	}
	// The other model is untouched.
	if status, _ := post(t, ts.URL+"/v1/chat/completions", `{"model":"fixed","max_tokens":2,"messages":[{"role":"user","content":"hi"}]}`, auth...); status != 200 {
		t.Errorf("fixed model: status %d, want 200", status)
	}
}

// TestGarbageOnTheWire: bytes that are not HTTP get an OpenAI-shaped 400,
// and the server keeps serving.
func TestGarbageOnTheWire(t *testing.T) {
	quiet.Wire(t, func() { testGarbageOnTheWire(t) })
}

func testGarbageOnTheWire(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	conn.Write([]byte("\x16\x03\x01 this is not HTTP at all\r\n\r\n"))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	conn.Close()
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 {
			t.Errorf("status %d, want 400", resp.StatusCode)
		} else {
			errorOf(t, b)
		}
	}
	if status, _ := get(t, ts.URL+"/health"); status != 200 {
		t.Errorf("health after garbage: %d", status)
	}
}
