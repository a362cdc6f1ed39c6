package report

import (
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestLoRALine: a server with LoRA on and no adapter asked for says so in
// a clause; one whose adapters ran or waited lists them.
func TestLoRALine(t *testing.T) {
	for _, c := range []struct {
		l    results.ServerLoRA
		want string
	}{
		{results.ServerLoRA{MaxLoRAs: 1, Samples: 1}, "1 adapter slot · no adapter running or waiting in 1 sample"},
		{results.ServerLoRA{MaxLoRAs: 2, Running: []string{"a"}, Samples: 3},
			"2 adapter slots · running a · waiting none · some adapter's requests waited in 0 of 3 samples"},
		{results.ServerLoRA{MaxLoRAs: 2, Running: []string{"a"}, Waiting: []string{"b"}, Samples: 3, SamplesWaiting: 2},
			"2 adapter slots · running a · waiting b · some adapter's requests waited in 2 of 3 samples"},
	} {
		if got := loraLine(&c.l); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.l, got, c.want)
		}
	}
}

// TestSlicesLineOfAPoolingRun: a pooling endpoint's slices show E2E
// (its answer is one body), a generating one's TTFT.
func TestSlicesLineOfAPoolingRun(t *testing.T) {
	sl := []results.Slice{{Completed: 3, TTFTSched: results.SliceDist{Count: 3, P50: 16.9}, E2ESched: results.SliceDist{Count: 3, P50: 40}}}
	for _, c := range []struct {
		endpoint, want string
	}{{"embeddings", "E2E sched p50 ms / completed: 40.0/3"}, {"chat", "TTFT sched p50 ms / completed: 16.9/3"}} {
		r := &results.Run{SliceS: 10, Slices: sl}
		r.Config.Endpoint = c.endpoint
		if got := SlicesLine(r); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.endpoint, got, c.want)
		}
	}
}

// TestPoolingSizesAndEnergy: a pooling workload is sized by what a
// request holds, not by a max_tokens nothing uses, and its energy by
// request, without a per-output-token figure of 0.
func TestPoolingSizesAndEnergy(t *testing.T) {
	c := results.Config{Endpoint: "rerank", InputTokens: 128, MaxTokens: 128, Batch: 4}
	if got := Sizes(c); got != "128-token prompts, 3 documents a request" {
		t.Errorf("rerank sizes %q", got)
	}
	c.Endpoint = "chat"
	if got := Sizes(c); got != "128-token prompts, max_tokens 128" {
		t.Errorf("chat sizes %q", got)
	}
	g := &results.GPUFigures{GPUs: []results.GPUFigure{{GPU: "0"}}, EnergyJ: 100, JoulesPerRequest: 2.5}
	line := GPULine(g)
	if strings.Contains(line, "per output token") || strings.Contains(line, "output tokens per J") || !strings.Contains(line, "1 GPU (") {
		t.Errorf("a pooling run's energy: %q", line)
	}
	g.JoulesPerOutputToken, g.OutputTokensPerJoule = 0.3, 3.33
	if line := GPULine(g); !strings.Contains(line, "0.3000 J per output token") || !strings.Contains(line, "3.33 output tokens per J") {
		t.Errorf("a generating run's energy: %q", line)
	}
}

// TestPoolingPageData: a pooling sweep's page charts its prompt tokens
// (it generates none) and its slices by E2E; a generating one's output
// tokens and TTFT.
func TestPoolingPageData(t *testing.T) {
	sl := make([]results.Slice, minChartSlices)
	for i := range sl {
		sl[i] = results.Slice{EndS: float64(i + 1), TTFTSched: results.SliceDist{Count: 1, P95: 5}, E2ESched: results.SliceDist{Count: 1, P95: 9}}
	}
	for _, c := range []struct{ endpoint, tokens, latency string }{{"embeddings", "prompt", "e2e_sched"}, {"chat", "output", "ttft_sched"}} {
		r := &results.Run{SliceS: 1, Slices: sl, Throughput: results.Throughput{RequestsPerS: 2, OutputTokensPerS: 7, TotalTokensPerS: 300}}
		r.Config.Endpoint = c.endpoint
		s := &results.Sweep{Axis: "rate", Levels: []results.Level{{Load: 2, Run: r}}}
		s.Config.Endpoint = c.endpoint
		js := sweepData(s)
		want := map[string]float64{"prompt": 300, "output": 7}[c.tokens]
		if js.Tokens != c.tokens || js.Levels[0].TokPerS != want || js.Levels[0].Slices.Latency != c.latency {
			t.Errorf("%s: tokens %q at %g, slices by %q; want %q at %g, by %q", c.endpoint, js.Tokens, js.Levels[0].TokPerS,
				js.Levels[0].Slices.Latency, c.tokens, want, c.latency)
		}
	}
}

// TestServerFiguresNoneNoTable: a server view with no figure both sides
// timed (every request failed) draws no empty table.
func TestServerFiguresNoneNoTable(t *testing.T) {
	var b strings.Builder
	if err := serverFigures(&b, &results.Server{Source: "llamacpp"}); err != nil || b.Len() != 0 {
		t.Errorf("%v: %q", err, b.String())
	}
}

// TestConnsLine: the connections line names what happened, and leaves out
// a count that is nought (a server closing idle connections with nothing
// re-sent is not "0 requests re-sent").
func TestConnsLine(t *testing.T) {
	for _, c := range []struct {
		cs       results.Connections
		want, no string
	}{
		{results.Connections{Opened: 8, StaleClosed: 6}, "conns    8 opened · 6 found closed by the server before reuse\n", "re-sent"},
		{results.Connections{Opened: 9, Resent: 1}, "conns    9 opened · 1 request re-sent after", "found closed"},
		{results.Connections{Opened: 9, StaleClosed: 2, Resent: 3}, "2 found closed by the server before reuse · 3 requests re-sent", ""},
		{results.Connections{Opened: 4}, "", "conns"},
	} {
		r := sampleRun()
		r.Connections = &c.cs
		var b strings.Builder
		if err := Run(&b, r); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(strings.Fields(b.String()), " ")
		if want := strings.Join(strings.Fields(c.want), " "); !strings.Contains(got, want) {
			t.Errorf("%+v: no %q in\n%s", c.cs, want, b.String())
		}
		if c.no != "" && strings.Contains(got, c.no) && !strings.Contains(c.want, c.no) {
			t.Errorf("%+v: %q in\n%s", c.cs, c.no, b.String())
		}
	}
}
