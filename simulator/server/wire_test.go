package server

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
)

var updateWire = flag.Bool("update", false, "rewrite golden files")

// wireRequests are the scripted requests whose exact answers on the wire
// are kept as a golden file: a change of layout inside the simulator must
// not change one byte of them.
//
// A stream whose tokens are timed may group late tokens into one chunk on
// a busy machine, so for those (decoded) only the dechunked body is kept.
var wireRequests = []struct {
	name, path, body string
	decoded          bool
}{
	{"chat streamed with usage", "/v1/chat/completions", `{"model":"instant","messages":[{"role":"user","content":"Hello there"}],"max_tokens":12,"stream":true,"stream_options":{"include_usage":true}}`, false},
	{"chat streamed, fixed rate", "/v1/chat/completions", `{"model":"fixed","messages":[{"role":"user","content":"Tell me a story."}],"max_tokens":5,"stream":true}`, true},
	{"chat unary", "/v1/chat/completions", `{"model":"instant","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Tell me a story."}],"max_tokens":8}`, false},
	{"completions streamed", "/v1/completions", `{"model":"instant","prompt":"Once upon a time","max_tokens":6,"stream":true,"stream_options":{"include_usage":true}}`, false},
	{"completions unary", "/v1/completions", `{"model":"sched","prompt":"Once upon a time","max_tokens":6}`, false},
	{"bad request", "/v1/chat/completions", `{"model":"instant","messages":[{"role":"user","content":"hi"}],"temperature":9}`, false},
	{"unknown model", "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`, false},
}

// rawExchange sends one request on a fresh connection and returns the
// response exactly as it came.
func rawExchange(t *testing.T, addr, path, body string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(bufio.NewReader(c))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// masked hides the two fields that change from run to run (the Date
// header, "created"). It runs after a stream is dechunked: "created"'s
// digits are counted in their chunk's size.
func masked(s string) string {
	s = regexp.MustCompile(`(?m)^Date: .*\r$`).ReplaceAllString(s, "Date: (masked)\r")
	return regexp.MustCompile(`"created":\d+`).ReplaceAllString(s, `"created":0`)
}

// TestWireBytesGolden keeps the bytes of streamed and unary answers.
func TestWireBytesGolden(t *testing.T) {
	quiet.Wire(t, func() { testWireBytesGolden(t) })
}

func testWireBytesGolden(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	addr := strings.TrimPrefix(ts.URL, "http://")
	var out bytes.Buffer
	for _, r := range wireRequests {
		answer := rawExchange(t, addr, r.path, r.body)
		if r.decoded {
			resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(answer)), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("%s: %v", r.name, err)
			}
			answer = fmt.Sprintf("%s · %s (body dechunked)\n%s", resp.Status, resp.Header.Get("Content-Type"), body)
		}
		fmt.Fprintf(&out, "=== %s: POST %s\n%s\n--- answer\n%s\n", r.name, r.path, r.body, masked(answer))
	}
	path := filepath.Join("testdata", "wire.golden")
	if *updateWire {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestWireBytesGolden -update writes it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("the answers on the wire changed; got:\n%s", out.String())
	}
}
