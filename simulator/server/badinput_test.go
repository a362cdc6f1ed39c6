package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
)

// gauges reads the running and waiting gauges of every model from
// /metrics, summed.
func gauges(t *testing.T, ts *testServer) (running, waiting float64) {
	t.Helper()
	_, b := get(t, ts.URL+"/metrics")
	re := regexp.MustCompile(`(?m)^vllm:num_requests_(running|waiting)\{[^}]*\} (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		if m[1] == "running" {
			running += v
		} else {
			waiting += v
		}
	}
	return running, waiting
}

// waitIdle waits for every gauge and the summary's running counts to fall
// back to zero, which a leak never does.
func waitIdle(t *testing.T, ts *testServer, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, w := gauges(t, ts)
		var summed int64
		for _, m := range []string{"fixed", "instant", "sched"} {
			summed += summaryOf(t, ts, m).Requests.Running
		}
		if r == 0 && w == 0 && summed == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: running %g waiting %g, summary running %d; want all back to 0", what, r, w, summed)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestErrorPathsReleaseGauges drives every way a request can fail, on every
// engine, and checks that nothing stays counted as running or waiting.
// `"prompt": ""` on the scheduler engine used to hang and hold a running
// request forever.
func TestErrorPathsReleaseGauges(t *testing.T) {
	quiet.Wire(t, func() { testErrorPathsReleaseGauges(t) })
}

func testErrorPathsReleaseGauges(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	for _, model := range []string{"fixed", "instant", "sched"} {
		cases := []struct {
			name, path, body, fault string
			status                  int
		}{
			{"empty prompt", "/v1/completions", `{"model":"` + model + `","prompt":""}`, "", 400},
			{"empty prompt list", "/v1/completions", `{"model":"` + model + `","prompt":[""]}`, "", 400},
			{"bad json", "/v1/chat/completions", `{"model":`, "", 400},
			{"bad type", "/v1/chat/completions", `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}],"temperature":"hot"}`, "", 400},
			{"429", "/v1/chat/completions", chatBody(model, true), "429", 429},
			{"500", "/v1/chat/completions", chatBody(model, true), "error_500", 500},
			{"503", "/v1/chat/completions", chatBody(model, false), "error_503", 503},
			{"401", "/v1/chat/completions", chatBody(model, true), "401", 401},
			{"context length", "/v1/chat/completions", chatBody(model, true), "context_length", 400},
			{"unknown fault", "/v1/chat/completions", chatBody(model, true), "explode", 400},
			{"cut", "/v1/chat/completions", chatBody(model, true), "cut", 200},
			{"spike", "/v1/chat/completions", chatBody(model, false), "spike", 200},
			{"too long", "/v1/completions", `{"model":"` + model + `","prompt":"` + strings.Repeat("word ", 40000) + `"}`, "", 400},
		}
		for _, tc := range cases {
			var headers []string
			if tc.fault != "" {
				headers = []string{"X-Knee-Fault", tc.fault}
			}
			status, body := post(t, ts.URL+tc.path, tc.body, headers...)
			if status != tc.status {
				t.Errorf("%s %s: status %d, want %d (%.200s)", model, tc.name, status, tc.status, body)
			}
			waitIdle(t, ts, model+" "+tc.name)
		}
		// A client that goes away in the middle of a stream.
		hangUp(t, ts, chatBody(model, true))
		waitIdle(t, ts, model+" hang-up")
	}
}

func chatBody(model string, stream bool) string {
	return fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"Tell me a story."}],"max_tokens":40,"stream":%v}`, model, stream)
}

// hangUp starts a stream and closes the connection after its first bytes.
func hangUp(t *testing.T, ts *testServer, body string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Read(make([]byte, 64))
	c.Close()
}

// TestValidationNamesTheParam: wrong types and out-of-range values are
// 400s that name the parameter, as OpenAI and vLLM answer them.
func TestValidationNamesTheParam(t *testing.T) {
	t.Parallel()
	inBubble(t, testValidationNamesTheParam)
}

func testValidationNamesTheParam(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	base := `{"model":"instant","messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct{ extra, param string }{
		{`,"temperature":"hot"`, "temperature"},
		{`,"temperature":5`, "temperature"},
		{`,"top_p":1.5`, "top_p"},
		{`,"top_logprobs":50`, "top_logprobs"},
		{`,"presence_penalty":-3`, "presence_penalty"},
		{`,"frequency_penalty":"x"`, "frequency_penalty"},
		{`,"logprobs":3`, "logprobs"},
		{`,"max_tokens":0`, "max_tokens"},
	} {
		status, body := post(t, ts.URL+"/v1/chat/completions", base+tc.extra+"}")
		e := errorOf(t, body)
		if status != 400 || e.Error.Param == nil || *e.Error.Param != tc.param {
			t.Errorf("%s: status %d, error %+v, want 400 naming %q", tc.extra, status, e.Error, tc.param)
		}
	}
	status, body := post(t, ts.URL+"/v1/completions", `{"model":"instant","prompt":"hi","logprobs":9}`)
	if status != 400 || !strings.Contains(string(body), "logprobs") {
		t.Errorf("completions logprobs 9: %d %s", status, body)
	}
	status, body = post(t, ts.URL+"/v1/chat/completions", "{\"model\":\"instant\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}")
	if status != 400 || !strings.Contains(string(body), "UTF-8") {
		t.Errorf("invalid UTF-8: %d %s", status, body)
	}
	// In range, the same parameters are accepted.
	if status, body := post(t, ts.URL+"/v1/chat/completions", base+`,"temperature":0.7,"top_p":0.9,"top_logprobs":5,"logprobs":true}`); status != 200 {
		t.Errorf("valid sampling parameters refused: %d %s", status, body)
	}
}

// TestFaultHeader: an unknown kind is a 400 listing the kinds; the numeric
// forms the README uses work.
func TestFaultHeader(t *testing.T) {
	t.Parallel()
	inBubble(t, testFaultHeader)
}

func testFaultHeader(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	status, body := post(t, ts.URL+"/v1/chat/completions", chatBody("instant", false), "X-Knee-Fault", "explode")
	if status != 400 || !strings.Contains(string(body), "error_429") || !strings.Contains(string(body), "stall") {
		t.Errorf("unknown fault: %d %s", status, body)
	}
	for _, code := range []int{429, 500, 503, 401} {
		if status, _ := post(t, ts.URL+"/v1/chat/completions", chatBody("instant", false), "X-Knee-Fault", strconv.Itoa(code)); status != code {
			t.Errorf("X-Knee-Fault: %d answered %d", code, status)
		}
	}
	// Fault parameters are bounded: 1e13 ms used to overflow into no stall.
	status, body = post(t, ts.URL+"/admin/faults", `{"model":"instant","faults":{"rules":[{"kind":"stall","rate":1,"duration_ms":1e13}]}}`)
	if status != 400 {
		t.Errorf("a stall of 1e13 ms: %d %s", status, body)
	}
}

// TestRoutesAsVLLM: HEAD wherever GET works, GET /v1/models/{id}, the
// cache configuration as vLLM publishes it, and the summary reset behind
// the key.
func TestRoutesAsVLLM(t *testing.T) {
	t.Parallel()
	inBubble(t, testRoutesAsVLLM)
}

func testRoutesAsVLLM(t *testing.T) {
	ts := startSim(t, testModels, "", "key")
	auth := func(req *http.Request) *http.Response {
		req.Header.Set("Authorization", "Bearer key")
		resp, err := client(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, path := range []string{"/health", "/metrics", "/metrics/summary", "/v1/models", "/v1/models/sched"} {
		req, _ := http.NewRequest("HEAD", ts.URL+path, nil)
		if resp := auth(req); resp.StatusCode != 200 {
			t.Errorf("HEAD %s: %d", path, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("GET", ts.URL+"/v1/models/sched", nil)
	req.Header.Set("Authorization", "Bearer key")
	resp, err := client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"id":"sched"`) {
		t.Errorf("GET /v1/models/sched: %d %s", resp.StatusCode, b)
	}
	req, _ = http.NewRequest("GET", ts.URL+"/v1/models/nope", nil)
	if resp := auth(req); resp.StatusCode != 404 {
		t.Errorf("GET /v1/models/nope: %d", resp.StatusCode)
	}
	if status, _ := post(t, ts.URL+"/metrics/summary/reset", "{}"); status != 401 {
		t.Errorf("reset without the key: %d, want 401", status)
	}
	if status, _ := post(t, ts.URL+"/metrics/summary/reset", "{}", "Authorization", "Bearer key"); status != 200 {
		t.Errorf("reset with the key: %d", status)
	}
	_, m := get(t, ts.URL+"/metrics")
	line := regexp.MustCompile(`(?m)^vllm:cache_config_info\{[^}]*model_name="sched"[^}]*\} 1$`).FindString(string(m))
	for _, want := range []string{`block_size="16"`, `enable_prefix_caching="`, `gpu_memory_utilization="0.9"`, `num_gpu_blocks="`} {
		if !strings.Contains(line, want) {
			t.Errorf("vllm:cache_config_info %q lacks %s", line, want)
		}
	}
}

// TestTrickledHeadersGet408: a client that sends its headers a byte at a
// time gets 408 after the header timeout, not a 60 s wait.
func TestTrickledHeadersGet408(t *testing.T) {
	quiet.Wire(t, func() { testTrickledHeadersGet408(t) })
}

func testTrickledHeadersGet408(t *testing.T) {
	mf, _ := ParseModels("m", []byte(testModels))
	b, _ := builtinFile("responses")
	r, _ := ParseResponses("r", b)
	s, err := NewServer(Options{Models: mf, Responder: r, HeaderTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go s.Serve(ln)
	defer s.Shutdown(time.Second)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	go func() {
		for _, ch := range "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 50) {
			if _, err := c.Write([]byte{byte(ch)}); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	status, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(status, "408") {
		t.Errorf("status line %q (%v), want 408", status, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("408 after %v", took)
	}
}

// TestShutdownEndsStreamsWithAnError: a stream still open when the grace
// runs out gets an error event before its connection closes.
func TestShutdownEndsStreamsWithAnError(t *testing.T) {
	quiet.Wire(t, func() { testShutdownEndsStreamsWithAnError(t) })
}

func testShutdownEndsStreamsWithAnError(t *testing.T) {
	mf, _ := ParseModels("m", []byte(testModels))
	b, _ := builtinFile("responses")
	r, _ := ParseResponses("r", b)
	s, err := NewServer(Options{Models: mf, Responder: r})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go s.Serve(ln)
	body := `{"model":"fixed","messages":[{"role":"user","content":"Tell me a long story."}],"max_tokens":2000,"ignore_eos":true,"stream":true}`
	req, _ := http.NewRequestWithContext(context.Background(), "POST", "http://"+ln.Addr().String()+"/v1/chat/completions", strings.NewReader(body))
	resp, err := client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.AfterFunc(200*time.Millisecond, func() { _ = s.Shutdown(100 * time.Millisecond) })
	all, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(all), `"error":{"message":"the server is shutting down"`) || strings.Contains(string(all), "[DONE]") {
		t.Errorf("the stream ended without the shutdown's error event: ...%.300s", all[max(0, len(all)-300):])
	}
}

// TestLogsNeverCarryAuthorization: whatever fasthttp reports, an
// Authorization header's value never reaches the log.
func TestLogsNeverCarryAuthorization(t *testing.T) {
	msg := redactAuth("error when reading request headers: \"POST / HTTP/1.1\r\nAuthorization: Bearer sk-live-123\r\nHost: x\"")
	if strings.Contains(msg, "sk-live-123") || !strings.Contains(msg, "Authorization: [redacted]") {
		t.Errorf("log line %q", msg)
	}
}
