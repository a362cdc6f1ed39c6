package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator"
	"github.com/kneebench/knee/simulator/server"
)

// TestPlanAnswersAndWrites: knee plan lists the configurations meeting the
// SLO cheapest first, with replicas, GPUs, headroom at or above the target
// and costs from the price table given, names those that cannot serve
// (a model too big for a GPU, with the preset that fits), and writes JSON
// and CSV; --find-max-rate answers for a fleet; bad flags are usage
// errors.
func TestPlanAnswersAndWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prices := filepath.Join(dir, "prices.yml")
	if err := os.WriteFile(prices, []byte("l4: 0.5\nh100-80gb: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := execute(t, "plan", "--rate", "8", "--input-tokens", "512", "--max-tokens", "64", "--slo", "ttft_p95:1000",
		"--gpus", "l4x1,h100-80gbx1", "--models", "llama-3.1-8b,llama-3.1-405b", "--window", "1m", "--prices", prices, "--out-dir", dir, "--label", "p")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	p := &results.Plan{}
	if err := readJSON(filepath.Join(dir, "p.json"), p); err != nil {
		t.Fatal(err)
	}
	var met []results.PlanRow
	unfit := false
	for _, r := range p.Rows {
		if r.Meets {
			met = append(met, r)
			if r.Headroom < 8 || r.Replicas < 1 || r.GPUs != r.Replicas*r.TP || r.CostPerHour <= 0 || r.AtTarget == nil || !(r.AtTarget.Bounds["ttft_p95:1000"] > 0 && r.AtTarget.Bounds["ttft_p95:1000"] <= 1000) {
				t.Errorf("row %+v", r)
			}
		} else if strings.Contains(r.Why, "the smallest preset") {
			unfit = true
		}
	}
	if len(met) == 0 || !unfit {
		t.Fatalf("%d rows meet the SLO, a too-big model named: %v\n%s", len(met), unfit, out)
	}
	for i := 1; i < len(met); i++ {
		if met[i].CostPerHour < met[i-1].CostPerHour {
			t.Errorf("not cheapest first: %s at $%.2f/h after %s at $%.2f/h", met[i].Config, met[i].CostPerHour, met[i-1].Config, met[i-1].CostPerHour)
		}
	}
	if !strings.Contains(out, "cheapest first") || !strings.Contains(out, "prices per GPU-hour from") {
		t.Errorf("the table does not say what it is:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "p.csv")); err != nil || !strings.HasPrefix(string(b), "config,gpu,tp,model,replicas") {
		t.Errorf("CSV: %v\n%.200s", err, b)
	}
	code, out, errOut = execute(t, "plan", "--find-max-rate", "--gpus", "l4x2", "--input-tokens", "512", "--max-tokens", "64", "--slo", "ttft_p95:1000",
		"--window", "1m", "--routing", "round-robin", "--out-dir", dir, "--label", "max")
	if code != 0 || !strings.Contains(out, "the largest load each fleet holds") {
		t.Fatalf("--find-max-rate: exit %d\n%s\n%s", code, out, errOut)
	}
	m := &results.Plan{}
	if err := readJSON(filepath.Join(dir, "max.json"), m); err != nil || len(m.Rows) < 2 || !m.Rows[0].Meets || m.Rows[0].Headroom <= 0 {
		t.Errorf("find-max rows %+v, %v", m.Rows, err)
	}
	for _, bad := range [][]string{
		{"plan", "--input-tokens", "64"},
		{"plan", "--rate", "5", "--find-max-rate"},
		{"plan", "--rate", "5", "--slo", "ttft_p97:500"},
		{"plan", "--rate", "5", "--gpus", "h1000"},
		{"plan", "--rate", "5", "--window", "10s"},
		{"plan", "--rate", "5", "--requests", "100"},
		{"plan", "--rate", "5", "--base-url", "http://127.0.0.1:1/v1"},
		// No machine's memory holds 86 billion predicted requests.
		{"plan", "--rate", "1000000", "--window", "24h"},
	} {
		if code, _, _ := execute(t, bad...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, ExitUsage)
		}
	}
}

// TestPlanOnAPoorFitSaysSoFirst: a plan on a models file whose fit was
// judged poor and written with --accept-poor-fit puts its caveat before
// the table and in the file, not only in a note after the figures.
func TestPlanOnAPoorFitSaysSoFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f, err := simulator.PresetModels("h100-80gb/llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	f.Models[0].Fit = &server.FitSpec{Measured: "llama.json", TrainLevels: 2, TrainErrorPct: 393.9, Verdict: results.FitPoor,
		Problems: []string{"the fitted levels are 393.9% off on average"}}
	yml, err := f.YAML("a poor fit")
	if err != nil {
		t.Fatal(err)
	}
	models := filepath.Join(dir, "poor.yml")
	if err := os.WriteFile(models, yml, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := execute(t, "plan", "--calibrated", models, "--rate", "5", "--input-tokens", "256", "--max-tokens", "32",
		"--slo", "ttft_p95:500", "--window", "1m", "--out-dir", dir, "--label", "poor")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	caveat, table := strings.Index(out, "CAVEAT: planned on a POOR fit (393.9%"), strings.Index(out, "| replicas |")
	if caveat < 0 || table < 0 || caveat > table {
		t.Errorf("the caveat is not said before the table:\n%s", out)
	}
	p := &results.Plan{}
	if err := readJSON(filepath.Join(dir, "poor.json"), p); err != nil || !strings.Contains(p.Caveat, "POOR fit") {
		t.Errorf("the plan file's caveat %q, %v", p.Caveat, err)
	}
}

// TestPlanReplicasHoldLive: the replica count knee plan answers is one a
// live fleet confirms. For 8 requests/s of 512-token prompts with TTFT p95
// under a second on L4s, the plan's N replicas are run as knee sim
// --replicas N, each replica sent its share of one schedule (arrival k
// to replica k mod N, by --shard: round-robin routing), merged; N meet the
// SLO, and N−1 do not.
func TestPlanReplicasHoldLive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := execute(t, "plan", "--rate", "8", "--input-tokens", "512", "--max-tokens", "64", "--slo", "ttft_p95:1000",
		"--gpus", "l4x1", "--routing", "round-robin", "--window", "2m", "--out-dir", dir, "--label", "p")
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	p := &results.Plan{}
	if err := readJSON(filepath.Join(dir, "p.json"), p); err != nil {
		t.Fatal(err)
	}
	n := p.Rows[0].Replicas
	if !p.Rows[0].Meets || n < 2 {
		t.Fatalf("the plan answers %+v: the test needs two replicas or more", p.Rows[0])
	}
	models, err := simulator.PresetModels("l4x1/llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	responder, err := simulator.LoadResponses(context.Background(), "builtin:bench-responses")
	if err != nil {
		t.Fatal(err)
	}
	// A fleet of N replicas and one of N−1 run at once, each replica
	// sent its share of one schedule.
	live := func(t *testing.T, replicas int) *results.Run {
		urls := make([]string, replicas)
		for i := range urls {
			_, urls[i] = simServer(t, simulator.Options{Models: models, Responder: responder})
		}
		start := time.Now().Add(10 * time.Second).Format(time.RFC3339Nano)
		files := make([]string, replicas)
		var wg sync.WaitGroup
		for i := range replicas {
			files[i] = filepath.Join(dir, fmt.Sprintf("r%d-s%d.json", replicas, i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, out, errOut := executeCtx(t, bench.WithNonce(context.Background(), "plan-live"), "run", "--base-url", urls[i], "--model", "llama-3.1-8b",
					"--rate", "8", "--duration", "30s", "--drain-timeout", "5s", "--input-tokens", "512", "--max-tokens", "64", "--seed", "3", "--no-server-metrics",
					"--shard", fmt.Sprintf("%d/%d", i, replicas), "--start-at", start, "--output", files[i], "--quiet")
				if code != 0 {
					t.Errorf("shard %d of %d: exit %d\n%s\n%s", i, replicas, code, out, errOut)
				}
			}()
		}
		wg.Wait()
		merged := filepath.Join(dir, fmt.Sprintf("r%d.json", replicas))
		if code, out, errOut := execute(t, append(append([]string{"merge"}, files...), "-o", merged)...); code != 0 {
			t.Fatalf("merge: exit %d\n%s\n%s", code, out, errOut)
		}
		r, err := results.ReadRun(merged)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	runs := make([]*results.Run, 2)
	inBubble(t, func(t *testing.T) {
		runs[0], runs[1] = live(t, n), live(t, n-1)
	})
	for k, replicas := range []int{n, n - 1} {
		r := runs[k]
		v := p.SLO.Judge(results.Level{Load: 8, Run: r}, "rate", results.HealthIgnore)
		t.Logf("%d replicas live: TTFT p95 %.0f ms, completion %.2f of %.2f/s offered: meets %v %s", replicas, r.Stats.TTFT.P95,
			r.Arrivals.CompletionRate, r.Arrivals.OfferedRate, v.Meets, v.Why)
		if v.Meets != (replicas == n) {
			t.Errorf("%d replicas: meets the SLO %v (%s); the plan said %d replicas are the fewest that do", replicas, v.Meets, v.Why, n)
		}
	}
}

// readJSON decodes a JSON file into v.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
