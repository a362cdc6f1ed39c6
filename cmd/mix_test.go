package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
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
	url := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	return url + "/v1", func() []string {
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
	t.Parallel()
	inBubble(t, testMixSendsEachClass)
}

func testMixSendsEachClass(t *testing.T) {
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
	t.Parallel()
	inBubble(t, testMixFileErrors)
}

func testMixFileErrors(t *testing.T) {
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
	// The mix file named as the output too: refused, the file kept.
	if code, _, errOut := execute(t, "run", "--base-url", url, "--mix", mix, "--requests", "1", "-o", mix); code != ExitUsage {
		t.Errorf("-o over the --mix file: exit %d, %s", code, errOut)
	}
	if b, err := os.ReadFile(mix); err != nil || string(b) != twoClassMix {
		t.Errorf("the mix file was touched: %v", err)
	}
	if n := len(seen()); n != 0 {
		t.Errorf("%d requests were sent", n)
	}
}

// chatBatchSLOMix is a chat class and a batch class, each with its own
// SLO, on knee sim's default model.
const chatBatchSLOMix = `classes:
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
`

// TestMixKneesPredicted: a sweep of a mix finds each class's own knee,
// in virtual time on knee sim's default model: the chat class (TTFT
// sched p95 248 ms at 32/s, 4.1 s at 40/s) holds its 300 ms to 32/s, the
// batch class (E2E sched p95 1.95 s at 16/s, 3.2 s at 24/s) its 3 s to
// 16/s, so batch degrades first; Jain's index over the classes' goodput
// falls as the load rises.
func TestMixKneesPredicted(t *testing.T) {
	dir := t.TempDir()
	mix := writeFile(t, dir, "mix.yaml", chatBatchSLOMix)
	code, out, errOut := execute(t, "predict", "--mix", mix, "--rates", "4,8,16,24,32,40", "--step-duration", "60s", "--out-dir", dir, "--label", "mix")
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
	if knees["chat"] != 32 || knees["batch"] != 16 || sw.DegradedFirst != "batch" {
		t.Errorf("class knees %v, degraded first %q; want chat 32, batch 16, batch first", knees, sw.DegradedFirst)
	}
	first, last := sw.Levels[0].Run.Fairness, sw.Levels[len(sw.Levels)-1].Run.Fairness
	if first == nil || last == nil || !(*first > 0.99) || !(*last < *first) {
		t.Errorf("fairness from %v to %v; want near 1 at the lightest load and lower at the heaviest", first, last)
	}
	if !strings.Contains(out, "class knee      chat: 32/s") || !strings.Contains(out, "degraded first  batch") {
		t.Errorf("the report does not give the class knees:\n%s", out)
	}
}

// TestPriorityWhoWaits: under knee sim's priority scheduling, as vLLM's
// --scheduling-policy priority, the high-priority class's tail stays
// flat while the low class's load rises past what the box serves, and
// the total throughput is what first come first served gives, to 5%:
// scheduling moves who waits, not how much is served. In virtual time
// on an H100's llama-3.1-8b: chat 6/s (512 in, 64 out, priority 0) and
// batch at 14/s then 20/s (2,048 in, 128 out, priority 1); chat's TTFT
// sched p95 is 435 and 457 ms under priority, 12 and 60 s under FCFS.
func TestPriorityWhoWaits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	models := func(policy string) string {
		return writeFile(t, dir, policy+".yml", "models:\n  - name: base\n    preset: h100-80gb/llama-3.1-8b\n    scheduling_policy: "+policy+"\n")
	}
	mix := func(batch int, priorities bool) string {
		p0, p1 := "", ""
		if priorities {
			p0, p1 = "    priority: 0\n", "    priority: 1\n"
		}
		total := float64(6 + batch)
		return writeFile(t, dir, fmt.Sprintf("mix-%d-%v.yaml", batch, priorities), fmt.Sprintf(
			"classes:\n  - name: chat\n    share: %v\n    input_tokens: 512\n    max_tokens: 64\n%s  - name: batch\n    share: %v\n    input_tokens: 2048\n    max_tokens: 128\n%s",
			6/total, p0, float64(batch)/total, p1))
	}
	type got struct{ chatP95, outputPerS float64 }
	predict := func(policy string, batch int) got {
		label := fmt.Sprintf("%s-%d", policy, batch)
		code, out, errOut := execute(t, "predict", "--sim-models", models(policy), "--model", "base", "--mix", mix(batch, policy == "priority"),
			"--rates", fmt.Sprint(6+batch), "--step-duration", "120s", "--out-dir", dir, "--label", label)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", label, code, out, errOut)
		}
		sw, err := results.ReadSweep(filepath.Join(dir, label+".json"))
		if err != nil {
			t.Fatal(err)
		}
		r := sw.Levels[0].Run
		return got{r.Classes["chat"].Stats.TTFTSched.P95, r.Throughput.OutputTokensPerS}
	}
	prios := map[int]got{}
	for _, batch := range []int{14, 20} {
		fcfs, prio := predict("fcfs", batch), predict("priority", batch)
		prios[batch] = prio
		t.Logf("batch %d/s: chat TTFT sched p95 %.0f ms FCFS, %.0f ms priority; output %.0f vs %.0f tok/s", batch, fcfs.chatP95, prio.chatP95, fcfs.outputPerS, prio.outputPerS)
		if prio.chatP95 > 1000 || fcfs.chatP95 < 10*prio.chatP95 || math.Abs(prio.outputPerS-fcfs.outputPerS) > 0.05*fcfs.outputPerS {
			t.Errorf("batch %d/s: chat p95 %.0f ms FCFS, %.0f priority; output %.0f vs %.0f tok/s", batch, fcfs.chatP95, prio.chatP95, fcfs.outputPerS, prio.outputPerS)
		}
	}
	low, high := prios[14], prios[20]
	if math.Abs(high.chatP95-low.chatP95) > 0.1*low.chatP95 {
		t.Errorf("under priority chat's p95 moved from %.0f to %.0f ms as batch rose from 14 to 20/s; want flat", low.chatP95, high.chatP95)
	}
}

// TestLoRASwaps: knee sim serves two LoRA adapters of an H100's
// llama-3.1-8b in one GPU slot (max_loras 1) and one host slot, so every
// request whose adapter is not the resident one waits for its load from
// disk: 84 MB at 2 GB/s and then 25 GB/s, 45 ms of TTFT, which a second
// slot takes away. A mix alternating the two adapters at 2/s sees it
// live and predicted alike, each class's TTFT sched p50 and p95 within
// 10%.
func TestLoRASwaps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	models := func(slots int) string {
		return writeFile(t, dir, fmt.Sprintf("lora%d.yml", slots), fmt.Sprintf(
			"models:\n  - name: base\n    preset: h100-80gb/llama-3.1-8b\n    lora: {adapters: [a-lora, b-lora], max_loras: %d, max_cpu_loras: %d}\n", slots, slots))
	}
	mix := writeFile(t, dir, "ab.yaml", `classes:
  - name: a
    share: 0.5
    input_tokens: 64
    max_tokens: 8
    model: a-lora
  - name: b
    share: 0.5
    input_tokens: 64
    max_tokens: 8
    model: b-lora
`)
	predicted := func(slots int) *results.Run {
		label := fmt.Sprintf("p%d", slots)
		if code, out, errOut := execute(t, "predict", "--sim-models", models(slots), "--model", "base", "--mix", mix, "--rates", "2",
			"--step-duration", "30s", "--out-dir", dir, "--label", label); code != 0 {
			t.Fatalf("predict: exit %d\n%s\n%s", code, out, errOut)
		}
		sw, err := results.ReadSweep(filepath.Join(dir, label+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return sw.Levels[0].Run
	}
	one, two := predicted(1), predicted(2)
	swap := one.Classes["a"].Stats.TTFTSched.P50 - two.Classes["a"].Stats.TTFTSched.P50
	if want := 84e6/2e9*1000 + 84e6/25e9*1000; math.Abs(swap-want) > 0.1*want {
		t.Errorf("a second slot takes %.1f ms off TTFT sched p50; the load it spares is %.1f ms", swap, want)
	}
	var live *results.Run
	inBubble(t, func(t *testing.T) {
		url := startSim(t, models(1), "")
		live = runJSON(t, "run", "--base-url", url, "--model", "base", "--mix", mix, "--rate", "2", "--duration", "30s", "--reset-cache")
	})
	for _, class := range []string{"a", "b"} {
		l, p := live.Classes[class].Stats.TTFTSched, one.Classes[class].Stats.TTFTSched
		t.Logf("class %s: TTFT sched p50 %.1f live, %.1f predicted; p95 %.1f, %.1f", class, l.P50, p.P50, l.P95, p.P95)
		if math.Abs(l.P50-p.P50) > 0.1*p.P50 || math.Abs(l.P95-p.P95) > 0.1*p.P95 {
			t.Errorf("class %s: TTFT sched p50 %.1f live, %.1f predicted; p95 %.1f, %.1f", class, l.P50, p.P50, l.P95, p.P95)
		}
	}
}

// TestMixPlanned: knee plan over a mix meets every class's own SLO and
// names the class that binds: the batch class's 3 s E2E bound is nearer
// than chat's 300 ms TTFT bound on an H100's llama-3.1-8b at 20/s.
// Every prediction of the plan counts each class (the answers it shares
// between candidates included).
func TestMixPlanned(t *testing.T) {
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
	code, out, errOut := execute(t, "plan", "--mix", mix, "--rate", "20", "--gpus", "h100-80gb", "--models", "llama-3.1-8b", "--window", "1m",
		"--out-dir", dir, "--label", "plan")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	p := readPlan(t, filepath.Join(dir, "plan.json"))
	if p.Rows[0].AtTarget == nil {
		t.Fatalf("no figures at the target: %+v", p.Rows[0])
	}
	if f := p.Rows[0].AtTarget; f.BindingClass != "batch" || !(f.BindingSlack > 0 && f.BindingSlack < 1) || !strings.Contains(out, "binding class: batch") {
		t.Errorf("binding class %q (%.2f left); want batch\n%s", f.BindingClass, f.BindingSlack, out)
	}
}

// TestMixVary: a mix of class rates sets its own load (their sum), and a
// sweep with --vary raises one class's rate while the others keep
// theirs: in virtual time chat (6/s, 300 ms TTFT sched p95) holds until
// batch passes 10/s, and the interference row says how much chat's tail
// moved per unit of batch.
func TestMixVary(t *testing.T) {
	t.Parallel()
	inBubble(t, testMixVary)
}

func testMixVary(t *testing.T) {
	dir := t.TempDir()
	mix := writeFile(t, dir, "rates.yaml", `classes:
  - name: chat
    rate: 6
    input_tokens: 512
    max_tokens: 64
    slo: ttft_sched_p95:500
  - name: batch
    rate: 2
    input_tokens: 2048
    max_tokens: 128
`)
	code, out, errOut := execute(t, "predict", "--mix", mix, "--vary", "batch", "--rates", "2,6,10,14", "--step-duration", "60s", "--out-dir", dir, "--label", "vary")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "vary.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range sw.Levels {
		// chat keeps its 6/s: over a minute, 360 arrivals to within the
		// schedule's spread.
		if c := l.Run.Classes["chat"]; c == nil || math.Abs(float64(c.Requests.Sent)-360) > 60 || !l.Run.Classes["batch"].MixClass.Varied {
			t.Errorf("level %g: chat %+v", l.Load, c.Requests)
		}
	}
	in := sw.Interference
	if in == nil || in.Varied != "batch" || len(in.Rows) != 1 || in.Rows[0].Class != "chat" || !(in.Rows[0].TTFTSchedP95Slope > 0) || in.Rows[0].TTFTSchedP95To <= in.Rows[0].TTFTSchedP95From {
		t.Fatalf("interference %+v", in)
	}
	if len(sw.ClassKnees) != 1 || sw.ClassKnees[0].Knee == nil || sw.ClassKnees[0].Knee.Load != 10 {
		t.Errorf("chat's knee %+v; want batch at 10/s", sw.ClassKnees)
	}
	r := runJSON(t, "run", "--base-url", startSim(t, "", ""), "--mix", mix, "--duration", "2s", "--no-server-metrics")
	if r.Config.Rate != 8 || r.Classes["chat"] == nil {
		t.Errorf("a run of class rates at %g/s; want their sum, 8", r.Config.Rate)
	}
	shares := writeFile(t, dir, "shares.yaml", "classes:\n  - name: a\n    share: 1\n    input_tokens: 8\n    max_tokens: 4\n")
	for _, bad := range [][]string{
		{"predict", "--mix", shares, "--vary", "a", "--rates", "1,2"},
		{"predict", "--mix", mix, "--vary", "nobody", "--rates", "1,2"},
		{"run", "--mix", mix, "--rate", "3"},
		{"predict", "--mix", mix, "--rates", "1,2"},
	} {
		if code, _, errOut := execute(t, append(bad, "--out-dir", dir)...); code != ExitUsage {
			t.Errorf("%v: exit %d, %s; want a usage error", bad, code, errOut)
		}
	}
}

// TestAdapterAffinity: two replicas of a model with one adapter slot
// each, a 70/30 mix of two adapters: round robin sends each adapter to
// both replicas, which swap it in and out (45 ms of disk and PCIe each
// time); adapter affinity keeps each adapter on one replica, which never
// swaps after the first load.
func TestAdapterAffinity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	models := writeFile(t, dir, "lora.yml", "models:\n  - name: base\n    preset: h100-80gb/llama-3.1-8b\n    lora: {adapters: [a-lora, b-lora], max_loras: 1, max_cpu_loras: 1}\n")
	mix := writeFile(t, dir, "ab.yaml", "classes:\n  - name: a\n    share: 0.7\n    input_tokens: 64\n    max_tokens: 8\n    model: a-lora\n  - name: b\n    share: 0.3\n    input_tokens: 64\n    max_tokens: 8\n    model: b-lora\n")
	p50 := func(routing string) float64 {
		if code, out, errOut := execute(t, "predict", "--sim-models", models, "--model", "base", "--mix", mix, "--rates", "8", "--step-duration", "60s",
			"--replicas", "2", "--routing", routing, "--out-dir", dir, "--label", routing); code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", routing, code, out, errOut)
		}
		sw, err := results.ReadSweep(filepath.Join(dir, routing+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return sw.Levels[0].Run.Classes["b"].Stats.TTFTSched.P50
	}
	rr, aff := p50("round-robin"), p50("adapter-affinity")
	if !(rr > aff+30) {
		t.Errorf("class b's TTFT sched p50: %.1f ms round robin, %.1f adapter affinity; want the swaps (45 ms) gone", rr, aff)
	}
}

// TestPlanPolicyAndAdapters: knee plan gives every candidate the
// scheduling policy and the LoRA adapters asked, so a mix whose classes
// name adapters and priorities plans; a policy it does not know, or a
// priority under FCFS (refused, as vLLM refuses it), does not.
func TestPlanPolicyAndAdapters(t *testing.T) {
	dir := t.TempDir()
	mix := writeFile(t, dir, "mix.yaml", `classes:
  - name: chat
    share: 0.7
    input_tokens: 256
    max_tokens: 32
    model: chat-lora
    priority: 0
    slo: ttft_sched_p95:300
  - name: batch
    share: 0.3
    input_tokens: 1024
    max_tokens: 64
    model: batch-lora
    priority: 1
`)
	base := []string{"plan", "--mix", mix, "--rate", "4", "--gpus", "h100-80gb", "--models", "llama-3.1-8b", "--window", "1m", "--out-dir", dir}
	code, out, errOut := execute(t, append(base, "--scheduling-policy", "priority", "--lora-adapters", "chat-lora,batch-lora", "--max-loras", "2")...)
	if code != 0 || !strings.Contains(out, "binding class: chat") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, bad := range [][]string{
		{"--scheduling-policy", "sjf", "--lora-adapters", "chat-lora,batch-lora"},
		{"--lora-adapters", "chat-lora,chat-lora"},
	} {
		if code, _, errOut := execute(t, append(base, bad...)...); code != ExitUsage {
			t.Errorf("%v: exit %d, %s; want a usage error", bad, code, errOut)
		}
	}
	// Under FCFS every request with a priority is refused: no fleet serves
	// the mix.
	if code, out, _ := execute(t, append(base, "--lora-adapters", "chat-lora,batch-lora")...); code == 0 {
		t.Errorf("a mix with priorities planned under FCFS:\n%s", out)
	}
}

// TestMixDatasetClass: a class may send a dataset's prompts (read as
// --dataset reads one, relative to the mix file) beside a synthetic
// class; each level of a sweep continues through the class's entries.
func TestMixDatasetClass(t *testing.T) {
	t.Parallel()
	inBubble(t, testMixDatasetClass)
}

func testMixDatasetClass(t *testing.T) {
	url, seen := tenantServer(t)
	dir := t.TempDir()
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf(`{"prompt": "question number %d about the weather in a far away town", "max_tokens": 3}`, i))
	}
	writeFile(t, dir, "questions.jsonl", strings.Join(lines, "\n")+"\n")
	mix := writeFile(t, dir, "mix.yaml", `classes:
  - name: questions
    share: 0.5
    dataset: questions.jsonl
    max_tokens: 8
    model: q-model
  - name: synthetic
    share: 0.5
    input_tokens: 32
    max_tokens: 4
`)
	r := runJSON(t, "run", "--base-url", url, "--mix", mix, "--requests", "10", "--concurrency", "1", "--no-server-metrics")
	if q := r.Classes["questions"]; q == nil || q.Requests.OK != 5 || q.Tokens.OutputTotal != 5 || !strings.Contains(r.Config.Mix, "dataset") {
		t.Fatalf("questions: %+v, mix %q", q, r.Config.Mix)
	}
	n := 0
	for _, s := range seen() {
		if strings.HasPrefix(s, "q-model ") {
			n++
		}
	}
	if n < 5 {
		t.Errorf("the server saw %d requests of the dataset class's model", n)
	}
	bad := writeFile(t, dir, "bad.yaml", "classes:\n  - name: a\n    share: 1\n    dataset: missing.jsonl\n    max_tokens: 4\n")
	if code, _, errOut := execute(t, "run", "--base-url", url, "--mix", bad, "--requests", "1"); code != ExitRuntime || !strings.Contains(errOut, "missing.jsonl") {
		t.Errorf("a missing class dataset: exit %d, %s", code, errOut)
	}
}

// TestPredictRateMixIsOneLevel: a mix whose classes give their rates is
// one load, their sum: predicted as one level at it, not at the default
// sweep's rates the header would not match.
func TestPredictRateMixIsOneLevel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mix := writeFile(t, dir, "mix.yml", "classes:\n  - {name: chat, rate: 2, input_tokens: 128, max_tokens: 16}\n  - {name: batch, rate: 1, input_tokens: 512, max_tokens: 64}\n")
	code, out, errOut := execute(t, "predict", "--mix", mix, "--duration", "30s", "--out-dir", dir, "--label", "m")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "m.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Levels) != 1 || sw.Levels[0].Load != 3 || !strings.Contains(out, "1 level of rate") {
		t.Errorf("levels %v, want one at the classes' 3/s:\n%s", sw.Levels, out)
	}
}

// TestMixRatesBoundedAsALoad: the classes' rates together are held to the
// bound one --rate is.
func TestMixRatesBoundedAsALoad(t *testing.T) {
	t.Parallel()
	mix := writeFile(t, t.TempDir(), "mix.yml", "classes:\n  - {name: a, rate: 1000000, input_tokens: 8, max_tokens: 4}\n  - {name: b, rate: 1000000, input_tokens: 8, max_tokens: 4}\n")
	code, _, errOut := execute(t, "predict", "--mix", mix, "--duration", "1m")
	if code != ExitUsage || !strings.Contains(errOut, "add up to 2e+06/s") {
		t.Errorf("exit %d, %s", code, errOut)
	}
}
