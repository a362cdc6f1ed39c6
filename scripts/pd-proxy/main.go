// Command pd-proxy joins a prefill server and a decode server into one
// OpenAI endpoint, as vLLM's disaggregated-prefill toy proxy does: each
// chat or completions request goes first to the prefill server with
// max_tokens 1 and kv_transfer_params {"do_remote_decode": true}, then to
// the decode server with the kv_transfer_params the prefill answer
// returned, whose answer (streamed or not) is passed back as it comes.
// It is for trying knee's per-pool server view against real exporters
// (two llm-d-inference-sim instances, say), not for serving.
//
// Usage: go run ./scripts/pd-proxy -listen 127.0.0.1:18440 \
//
//	-prefill http://127.0.0.1:18441 -decode http://127.0.0.1:18442
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18440", "address to serve on")
	prefill := flag.String("prefill", "", "the prefill server's root URL")
	decode := flag.String("decode", "", "the decode server's root URL")
	flag.Parse()
	if *prefill == "" || *decode == "" {
		fmt.Fprintln(os.Stderr, "pd-proxy: give -prefill and -decode")
		os.Exit(2)
	}
	p := &proxy{prefill: *prefill, decode: *decode}
	http.HandleFunc("/v1/chat/completions", p.serve)
	http.HandleFunc("/v1/completions", p.serve)
	http.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) { p.pass(w, *decode+r.URL.Path, nil, "GET") })
	log.Fatal(http.ListenAndServe(*listen, nil))
}

type proxy struct{ prefill, decode string }

// serve runs one request on both servers.
func (p *proxy) serve(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"pd-proxy: the body is not JSON"}}`, http.StatusBadRequest)
		return
	}
	pre := map[string]any{}
	for k, v := range req {
		pre[k] = v
	}
	pre["max_tokens"], pre["stream"] = 1, false
	delete(pre, "stream_options")
	pre["kv_transfer_params"] = map[string]any{"do_remote_decode": true}
	body, _ := json.Marshal(pre)
	resp, err := http.Post(p.prefill+r.URL.Path, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	var ans map[string]any
	err = json.NewDecoder(resp.Body).Decode(&ans)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		http.Error(w, fmt.Sprintf(`{"error":{"message":"pd-proxy: prefill answered %d"}}`, resp.StatusCode), resp.StatusCode)
		return
	}
	if kv, ok := ans["kv_transfer_params"]; ok {
		req["kv_transfer_params"] = kv
	}
	body, _ = json.Marshal(req)
	p.pass(w, p.decode+r.URL.Path, body, "POST")
}

// pass sends body to url and copies the answer back, flushing as it
// comes, so a stream stays a stream.
func (p *proxy) pass(w http.ResponseWriter, url string, body []byte, method string) {
	out, _ := http.NewRequest(method, url, bytes.NewReader(body))
	out.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	f, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
			if f != nil {
				f.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}
