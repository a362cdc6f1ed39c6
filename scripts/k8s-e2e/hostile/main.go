// Command hostile sends a vision simulator deployed by `knee k8s sim` the
// image URLs an attacker inside the cluster would try (issue 56): the
// simulator's own routes, the API server, the kubelet, the cluster's DNS
// names, a cloud's metadata address, open and closed ports, file://, and
// images whose headers claim more pixels than any context holds. Every
// fetch must be refused in one neutral sentence, the same whatever the
// address (so no answer tells an open port from a closed one), and the
// simulator must still answer afterwards.
//
//	hostile SIM_URL MODEL URL...
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: hostile SIM_URL MODEL URL...")
		os.Exit(2)
	}
	sim, model, urls := strings.TrimSuffix(os.Args[1], "/"), os.Args[2], os.Args[3:]
	failed := false
	fail := func(format string, a ...any) {
		failed = true
		fmt.Printf("hostile: FAIL "+format+"\n", a...)
	}
	sentences := map[string][]string{}
	for _, u := range urls {
		code, msg := ask(sim, model, u)
		if code != http.StatusBadRequest || strings.Contains(msg, "root:") {
			fail("%s: %d %q, want 400", u, code, msg)
			continue
		}
		if strings.HasPrefix(u, "file:") {
			// Refused before any fetch, in vLLM's words for it.
			fmt.Printf("hostile: %s refused: %q\n", u, msg)
			continue
		}
		sentences[strings.ReplaceAll(msg, u, "URL")] = append(sentences[strings.ReplaceAll(msg, u, "URL")], u)
	}
	if len(sentences) != 1 {
		for s, us := range sentences {
			fail("%d URLs read %q: %v", len(us), s, us)
		}
	} else {
		for s := range sentences {
			fmt.Printf("hostile: %d fetches refused alike: %q\n", len(sentences[s]), s)
		}
	}
	for i, c := range bombs(sim, model) {
		if c != http.StatusBadRequest {
			fail("bomb %d: %d, want 400", i, c)
		}
	}
	if r, err := http.Get(sim + "/health"); err != nil || r.StatusCode != 200 {
		fail("the simulator no longer answers /health: %v", err)
	}
	if failed {
		os.Exit(1)
	}
}

// bombs sends eight image bombs at once (PNG headers of 1,000,000² and
// 100,000² pixels) and returns their statuses.
func bombs(sim, model string) []int {
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			side := uint32(1_000_000)
			if i%2 == 1 {
				side = 100_000
			}
			codes[i], _ = ask(sim, model, "data:image/png;base64,"+base64.StdEncoding.EncodeToString(pngHeader(side)))
		}()
	}
	wg.Wait()
	fmt.Printf("hostile: 8 image bombs sent at once: %v\n", codes)
	return codes
}

// ask sends one chat request carrying the image at u and returns the
// status and the error's message.
func ask(sim, model, u string) (int, string) {
	body, _ := json.Marshal(map[string]any{
		"model": model, "max_tokens": 4,
		"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "what is this?"},
			map[string]any{"type": "image_url", "image_url": map[string]string{"url": u}},
		}}},
	})
	c := &http.Client{Timeout: 30 * time.Second}
	r, err := c.Post(sim+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return r.StatusCode, e.Error.Message
}

// pngHeader is a PNG signature and header claiming side² pixels, and no
// pixels: under 60 bytes.
func pngHeader(side uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, side), side)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(ihdr)))
	start := len(b)
	b = append(append(b, "IHDR"...), ihdr...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
}
