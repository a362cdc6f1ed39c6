package transport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
	"github.com/kneebench/knee/workload/kind"

	"github.com/kneebench/knee/bench/internal/fakeserver"
	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// TestGenerateProtocol: SGLang's native /generate, on a stream shaped as
// its server writes one (testdata/sglang-generate.sse): the request goes
// to the root /generate with the prompt as text and its sampling
// parameters apart; each event whose completion count grew is a token,
// the counts and cached tokens come from meta_info, and the text kept is
// the whole answer (events carry it cumulatively).
func TestGenerateProtocol(t *testing.T) {
	quiet.Wire(t, func() { testGenerateProtocol(t) })
}

func testGenerateProtocol(t *testing.T) {
	stream, err := os.ReadFile("testdata/sglang-generate.sse")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var path string
	var body map[string]any
	url := fakeserver.StartRaw(t, &fakeserver.Raw{Serve: func(w *bufio.Writer, r *http.Request, _ int) bool {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		path = r.URL.Path
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("body %q: %v", b, err)
		}
		mu.Unlock()
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(stream), stream)
		return false
	}})
	c, err := NewClient(Target{BaseURL: url, Model: "m", Endpoint: kind.Name("generate"), Timeout: 5 * time.Second}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec := &record.Record{}
	c.Do(&workload.Request{Messages: []workload.Message{{Role: "user", Content: "The capital of France is"}}, MaxTokens: 4, IgnoreEOS: true}, rec, true)
	if rec.Class != "" {
		t.Fatalf("class %q: %s", rec.Class, rec.Message)
	}
	mu.Lock()
	defer mu.Unlock()
	if path != "/generate" || body["text"] != "The capital of France is" || body["stream"] != true {
		t.Errorf("sent %s %v", path, body)
	}
	if sp, _ := body["sampling_params"].(map[string]any); sp["max_new_tokens"] != 4.0 || sp["ignore_eos"] != true {
		t.Errorf("sampling_params %v", body["sampling_params"])
	}
	if rec.Chunks != 4 || rec.CompletionTokens != 4 || rec.PromptTokens != 7 || rec.CachedTokens != 3 || !rec.CachedReported || string(rec.Text) != " Paris. It is" {
		t.Errorf("chunks %d, completion %d, prompt %d, cached %d (%v), text %q", rec.Chunks, rec.CompletionTokens, rec.PromptTokens, rec.CachedTokens, rec.CachedReported, rec.Text)
	}
	if rec.NoDone {
		t.Error("the [DONE] was missed")
	}
}

// TestEveryKindHasItsProtocol: each kind of the table is spoken, and read
// as the table says its answer comes (register refuses the rest).
func TestEveryKindHasItsProtocol(t *testing.T) {
	for _, k := range kind.All() {
		p, err := protocolFor(k.Name)
		if err != nil {
			t.Errorf("%s: %v", k.Name, err)
			continue
		}
		if _, streams := p.(streamProtocol); streams != k.Streamed {
			t.Errorf("%s: streamed %v, the table says %v", k.Name, streams, k.Streamed)
		}
	}
	if _, err := protocolFor("audio"); err == nil || !strings.Contains(err.Error(), kind.List()) {
		t.Errorf("an unknown kind: %v; want the kinds listed", err)
	}
}

// TestAsksFull: a request asks for its whole max_tokens when it, the
// target or --extra-body says ignore_eos, and --extra-body's word wins
// (at the top or under SGLang's sampling_params).
func TestAsksFull(t *testing.T) {
	for _, tc := range []struct {
		name       string
		extra      string
		target, rq bool
		want       bool
		endpoint   Endpoint
	}{
		{"nothing", "", false, false, false, "chat"},
		{"the target", "", true, false, true, "chat"},
		{"the request", "", false, true, true, "chat"},
		{"extra body", `{"ignore_eos": true}`, false, false, true, "chat"},
		{"extra body says no", `{"ignore_eos":false}`, true, true, false, "chat"},
		{"sampling_params", `{"sampling_params":{"ignore_eos":true}}`, false, false, true, "chat"},
		{"another field", `{"top_k":1}`, true, false, true, "chat"},
		{"a stop beside it", `{"ignore_eos":true,"stop":["\n\n"]}`, true, false, false, "chat"},
		{"a pooling kind", "", true, true, false, "embeddings"},
	} {
		c, err := NewClient(Target{BaseURL: "http://127.0.0.1:1/v1", Model: "m", IgnoreEOS: tc.target, ExtraBody: []byte(tc.extra), Endpoint: tc.endpoint}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.asksFull(&workload.Request{IgnoreEOS: tc.rq}); got != tc.want {
			t.Errorf("%s: asks for the whole budget %v, want %v", tc.name, got, tc.want)
		}
		c.Close()
	}
}

// FuzzScanEveryStream: any event payload reads without a panic under
// every generating kind's protocol (chat's, completions', SGLang's
// /generate, the Responses and Messages APIs), its counts never
// negative, its content always of a kind, and a tool call's pieces kept
// whatever they hold.
func FuzzScanEveryStream(f *testing.F) {
	var kinds []streamProtocol
	for _, n := range kind.Names() {
		if p, ok := protocols[n].(streamProtocol); ok {
			kinds = append(kinds, p)
		}
	}
	for _, s := range []string{
		`{"choices":[{"delta":{"content":"x","reasoning_content":"y"},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":-1}}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{"}}]}}]}`,
		`{"text":"abc","meta_info":{"prompt_tokens":5,"completion_tokens":3,"cached_tokens":9,"finish_reason":{"type":"length"}}}`,
		`{"type":"response.completed","response":{"id":"r","usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":1},"output_tokens":2}}}`,
		`{"type":"message_start","message":{"id":"m","usage":{"cache_read_input_tokens":1327,"input_tokens":1,"output_tokens":0}}}`,
		`{"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Hm"}}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"q\":"}}`,
		`{"type":"message_delta","usage":{"input_tokens":99999999999999999999,"cache_read_input_tokens":9223372036854775807}}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, `{"type":"content_block_delta","delta":{`,
	} {
		for k := range kinds {
			f.Add([]byte(s), uint8(k))
		}
	}
	f.Fuzz(func(t *testing.T, p []byte, which uint8) {
		sp := kinds[int(which)%len(kinds)]
		var c chunk
		pr := &progress{}
		sp.scan(p, &c, pr)
		sp.scan(p, &c, pr) // a second event on what the first left
		_ = sp.text(nil, p)
		sp.keepCall(&record.Record{ToolCalls: []record.ToolCall{{}}}, p)
		if c.promptTokens < 0 || c.outTokens < 0 || c.cachedTokens < 0 {
			t.Fatalf("%T: a negative count from %q: %+v", sp, p, c)
		}
		if c.content && !c.answer && !c.reasoning && !c.tool {
			t.Fatalf("%T: content of no kind from %q", sp, p)
		}
	})
}
