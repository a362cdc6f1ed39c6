package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// tenantServer answers chat requests as vLLM does, and keeps what each
// request carried: its model, priority, X-Tenant header and temperature.
func tenantServer(t *testing.T) (string, func() []string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			fmt.Fprint(w, `{"data":[{"id":"base"}]}`)
			return
		}
		var body struct {
			Model       string   `json:"model"`
			Priority    *int     `json:"priority"`
			Temperature *float64 `json:"temperature"`
			Messages    []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, 400)
			return
		}
		words := 0
		for _, m := range body.Messages {
			words += len(strings.Fields(m.Content))
		}
		prio, temp := "none", "none"
		if body.Priority != nil {
			prio = fmt.Sprint(*body.Priority)
		}
		if body.Temperature != nil {
			temp = fmt.Sprint(*body.Temperature)
		}
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s priority=%s tenant=%s temperature=%s", body.Model, prio, r.Header.Get("X-Tenant"), temp))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n")
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n", words)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

const twoClassMix = `classes:
  - name: chat
    share: 0.7
    input_tokens: 64
    max_tokens: 8
    model: chat-lora
    priority: 0
    headers: {X-Tenant: alpha}
    slo: ttft_sched_p95:300
  - name: batch
    share: 0.3
    input_tokens: 256
    max_tokens: 16
    model: batch-lora
    priority: 1
    headers: {X-Tenant: beta}
    extra_body: {temperature: 0.5}
`

// TestMixSendsEachClass: a two-class mix sends each class's requests with
// its model, priority, headers and body, in the counts the shares deal
// (the smooth round robin over arrival indices); the per-class summaries
// count what a summary of that class's records alone counts; shards of
// the mix merge into the same classes.
func TestMixSendsEachClass(t *testing.T) {
	url, seen := tenantServer(t)
	dir := t.TempDir()
	mix := writeFile(t, dir, "mix.yaml", twoClassMix)
	recs := filepath.Join(dir, "records.jsonl")
	r := runJSON(t, "run", "--base-url", url, "--mix", mix, "--requests", "40", "--concurrency", "1", "--no-calibrate", "--no-server-metrics", "--records", recs)
	// The order the shares deal: arrival 0 is the warm-up, 1..40 measured.
	order := workload.NewMix([]float64{0.7, 0.3}, nil)
	want := map[string]int64{}
	for i := 1; i <= 40; i++ {
		want[[]string{"chat", "batch"}[order.Class(i)]]++
	}
	for _, name := range []string{"chat", "batch"} {
		c := r.Classes[name]
		if c == nil || c.Requests.OK != want[name] {
			t.Fatalf("class %s: %+v; want %d ok", name, c, want[name])
		}
	}
	if want["chat"]+want["batch"] != r.Requests.OK || want["chat"] != 28 {
		t.Errorf("measured %d ok, classes %v", r.Requests.OK, want)
	}
	if mc := r.Classes["chat"].MixClass; mc == nil || mc.MetSLO == nil || !*mc.MetSLO || r.Classes["batch"].MixClass.MetSLO != nil {
		t.Errorf("chat's verdict %+v, batch's %+v", mc, r.Classes["batch"].MixClass)
	}
	kinds := map[string]int{}
	for _, s := range seen() {
		kinds[s]++
	}
	if len(kinds) != 2 || kinds["chat-lora priority=0 tenant=alpha temperature=none"] == 0 || kinds["batch-lora priority=1 tenant=beta temperature=0.5"] == 0 {
		t.Errorf("the server saw %v", kinds)
	}
	// Each class's summary is its records' alone.
	f, err := os.Open(recs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ttft := map[int][]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l results.RecordLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if !l.Warmup && l.TTFTSchedNs != nil {
			ttft[l.Class] = append(ttft[l.Class], float64(*l.TTFTSchedNs)/1e6)
		}
	}
	for k, name := range []string{"chat", "batch"} {
		got := ttft[k+1]
		slices.Sort(got)
		c := r.Classes[name]
		if int64(len(got)) != c.Stats.TTFTSched.Count || math.Abs(got[len(got)-1]-c.Stats.TTFTSched.Max) > 0.01*got[len(got)-1]+0.01 {
			t.Errorf("class %s: %d records, max TTFT sched %.3f ms; its summary %d, max %.3f", name, len(got), got[len(got)-1], c.Stats.TTFTSched.Count, c.Stats.TTFTSched.Max)
		}
	}

	// Two shards, merged: the same classes, their counts the shards'.
	var shards []string
	var sum = map[string]int64{}
	for i := range 2 {
		out := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		if code, stdout, errOut := execute(t, "run", "--base-url", url, "--mix", mix, "--rate", "50", "--requests", "20", "--no-calibrate", "--no-server-metrics",
			"--shard", fmt.Sprintf("%d/2", i), "-o", out, "--quiet"); code != 0 {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, stdout, errOut)
		}
		sr, err := results.ReadRun(out)
		if err != nil {
			t.Fatal(err)
		}
		for name, c := range sr.Classes {
			sum[name] += c.Requests.OK
		}
		shards = append(shards, out)
	}
	merged := filepath.Join(dir, "merged.json")
	if code, stdout, errOut := execute(t, append(append([]string{"merge"}, shards...), "-o", merged)...); code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, errOut)
	}
	m, err := results.ReadRun(merged)
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range sum {
		c := m.Classes[name]
		if c == nil || c.Requests.OK != n || c.Stats.TTFTSched.Count != n || c.MixClass == nil {
			t.Errorf("merged class %s: %+v; want %d ok", name, c, n)
		}
	}
	if m.Classes["chat"].Requests.OK+m.Classes["batch"].Requests.OK != m.Requests.OK {
		t.Errorf("merged classes %d + %d ok, whole %d", m.Classes["chat"].Requests.OK, m.Classes["batch"].Requests.OK, m.Requests.OK)
	}
}

// TestMixFileErrors: a bad mix file is refused before anything is sent,
// naming the line.
func TestMixFileErrors(t *testing.T) {
	url, seen := tenantServer(t)
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{"classes:\n  - name: a\n    share: 0.5\n    input_tokens: 8\n    max_tokens: 4\n  - name: b\n    share: 0.4\n    input_tokens: 8\n    max_tokens: 4\n", "add up to 0.9"},
		{"classes:\n  - name: a\n    share: 1\n    input_tokens: 8\n    max_tokens: 4\n    colour: red\n", "line 6"},
		{"classes:\n  - name: a\n    share: 1\n    input_tokens: 0\n    max_tokens: 4\n", "line 2"},
		{"classes:\n  - name: a\n    share: 0.5\n    input_tokens: 8\n    max_tokens: 4\n  - name: a\n    share: 0.5\n    input_tokens: 8\n    max_tokens: 4\n", "given twice"},
		{"classes:\n  - name: a\n    share: 1\n    input_tokens: 8\n    max_tokens: 4\n    slo: ttft_p101:3\n", "slo"},
		{"classes:\n  - name: a\n    share: 1\n    input_tokens: 8\n    max_tokens: 4\n    extra_body: {model: x}\n", "knee writes itself"},
		{"", "empty"},
	} {
		mix := writeFile(t, dir, "bad.yaml", c.text)
		code, _, errOut := execute(t, "run", "--base-url", url, "--mix", mix, "--requests", "1")
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, %q; want a usage error saying %q", c.text, code, errOut, c.want)
		}
	}
	mix := writeFile(t, dir, "mix.yaml", twoClassMix)
	if code, _, errOut := execute(t, "run", "--base-url", url, "--mix", mix, "--input-tokens", "64", "--requests", "1"); code != ExitUsage || !strings.Contains(errOut, "--input-tokens") {
		t.Errorf("--mix with --input-tokens: exit %d, %s", code, errOut)
	}
	if n := len(seen()); n != 0 {
		t.Errorf("%d requests were sent", n)
	}
}

// TestMixKneesPredicted: a sweep of a mix finds each class's own knee,
// in virtual time on knee sim's default model: the chat class (TTFT
// sched p95 207 ms at 24/s, 619 at 32/s) holds its 300 ms to 24/s, the
// batch class (E2E sched p95 2.2 s at 16/s, 4.5 s at 24/s) its 3 s to
// 16/s, so batch degrades first; Jain's index over the classes' goodput
// falls as the load rises.
func TestMixKneesPredicted(t *testing.T) {
	dir := t.TempDir()
	mix := writeFile(t, dir, "mix.yaml", `classes:
  - name: chat
    share: 0.7
    input_tokens: 256
    max_tokens: 32
    slo: ttft_sched_p95:300
  - name: batch
    share: 0.3
    input_tokens: 2048
    max_tokens: 128
    slo: e2e_sched_p95:3000
`)
	code, out, errOut := execute(t, "predict", "--mix", mix, "--rates", "4,8,16,24,32", "--step-duration", "60s", "--out-dir", dir, "--label", "mix")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "mix.json"))
	if err != nil {
		t.Fatal(err)
	}
	knees := map[string]float64{}
	for _, ck := range sw.ClassKnees {
		if ck.Knee != nil {
			knees[ck.Class] = ck.Knee.Load
		}
	}
	if knees["chat"] != 24 || knees["batch"] != 16 || sw.DegradedFirst != "batch" {
		t.Errorf("class knees %v, degraded first %q; want chat 24, batch 16, batch first", knees, sw.DegradedFirst)
	}
	first, last := sw.Levels[0].Run.Fairness, sw.Levels[len(sw.Levels)-1].Run.Fairness
	if first == nil || last == nil || !(*first > 0.99) || !(*last < *first) {
		t.Errorf("fairness from %v to %v; want near 1 at the lightest load and lower at the heaviest", first, last)
	}
	if !strings.Contains(out, "class knee      chat: 24/s") || !strings.Contains(out, "degraded first  batch") {
		t.Errorf("the report does not give the class knees:\n%s", out)
	}
}
