package cmd

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kneebench/knee/results"
)

// TestVoicePresetKnees (issue 38): the README's voice examples predicted.
// Under vLLM's defaults a new call's 18,000-token first turn takes every
// step's token budget until it is prefilled (2.2 s on an L40S), so other
// calls' turns queue behind it: on an L40S TTFT p95 misses 300 ms at
// every rate (no SLO knee), on an H100 it meets it only at the lightest
// level (267 ms at 0.25 calls/s, 3.2 s at 0.5). With
// --long-prefill-token-threshold 512 a turn waits a 512-token chunk at
// most, and the knees rise to where the presets' KV reasoning puts them:
// an L40S at 0.3 calls/s, an H100 at 0.5.
func TestVoicePresetKnees(t *testing.T) {
	heavy(t)
	dir := t.TempDir()
	predictVoice := func(preset, gpu string, threshold int) *results.Sweep {
		label := fmt.Sprintf("%s-%d", preset, threshold)
		models := writeFile(t, dir, label+".yml", fmt.Sprintf("models:\n  - name: gemma-3-12b\n    preset: %s/gemma-3-12b\n    long_prefill_token_threshold: %d\n", gpu, threshold))
		code, out, errOut := execute(t, "predict", "--workload", "voice", "--preset", preset, "--sim-models", models, "--out-dir", dir, "--label", label)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", label, code, out, errOut)
		}
		want := "long_prefill_token_threshold off"
		if threshold > 0 {
			want = fmt.Sprintf("long_prefill_token_threshold %d:", threshold)
		}
		if !strings.Contains(out, "vLLM V1 scheduling: first come, first served") || !strings.Contains(out, want) {
			t.Errorf("%s: the scheduling rules are not said:\n%s", label, out)
		}
		sw, err := results.ReadSweep(filepath.Join(dir, label+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return sw
	}
	sloKnee := func(sw *results.Sweep) float64 {
		if k := sw.Knees.SLO; k != nil {
			return k.Load
		}
		return 0
	}
	for _, tc := range []struct {
		preset, gpu    string
		defaults, knee float64
	}{{"l40s", "l40s", 0, 0.3}, {"h100-80gb", "h100-80gb", 0.25, 0.5}} {
		if k := sloKnee(predictVoice(tc.preset, tc.gpu, 0)); k != tc.defaults {
			t.Errorf("%s, vLLM's defaults: SLO knee at %g calls/s, want %g (first turns block the others)", tc.preset, k, tc.defaults)
		}
		if k := sloKnee(predictVoice(tc.preset, tc.gpu, 512)); k != tc.knee {
			t.Errorf("%s, threshold 512: SLO knee at %g calls/s, want %g", tc.preset, k, tc.knee)
		}
	}
	// Under SGLang's rules the preset's port names, neither its default
	// order nor longest-prefix-match finds a knee: its prefill adder takes
	// the request being chunked before any waiting one, so a warm turn
	// still waits out a new call's 18,000-token first turn.
	for _, policy := range []string{"fcfs", "lpm"} {
		label := "sglang-" + policy
		models := writeFile(t, dir, label+".yml", "models:\n  - name: gemma-3-12b\n    preset: l40s/gemma-3-12b\n    schedules_as: sglang\n    scheduling_policy: "+policy+"\n")
		code, out, errOut := execute(t, "predict", "--workload", "voice", "--preset", "l40s", "--sim-models", models, "--out-dir", dir, "--label", label)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", label, code, out, errOut)
		}
		if !strings.Contains(out, "SGLang scheduling: ") || !strings.Contains(out, "prompt chunks of 4096 tokens") {
			t.Errorf("%s: the scheduling rules are not said:\n%s", label, out)
		}
		sw, err := results.ReadSweep(filepath.Join(dir, label+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if k := sloKnee(sw); k != 0 {
			t.Errorf("%s: SLO knee at %g calls/s, want none", label, k)
		}
	}
}

// TestPlanSchedulesAsRefusals: --schedules-as takes vllm or sglang, lpm
// is SGLang's and the long-prefill threshold vLLM's; each mismatch is a
// usage error before anything is predicted.
func TestPlanSchedulesAsRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--schedules-as", "trt"}, `--schedules-as "trt": vllm, vllm-v0, sglang or trtllm`},
		{[]string{"--scheduling-policy", "lpm"}, "(lpm is sglang's: --schedules-as sglang)"},
		{[]string{"--schedules-as", "sglang", "--long-prefill-token-threshold", "512"}, "sglang (--schedules-as sglang) has none"},
		{[]string{"--schedules-as", "vllm,trtllm", "--scheduling-policy", "priority"}, `--scheduling-policy "priority": fcfs under trtllm's rules`},
	} {
		code, _, errOut := execute(t, append([]string{"plan", "--rate", "1", "--out-dir", dir}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want a usage error saying %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestPlanLongPrefillThreshold: knee plan --long-prefill-token-threshold
// gives every candidate the threshold. Voice calls at 0.5/s on an H100:
// under vLLM's defaults two replicas still miss TTFT sched p95 ≤ 300 ms
// (first turns block the others); with a 512-token threshold one meets it.
func TestPlanLongPrefillThreshold(t *testing.T) {
	heavy(t)
	dir := t.TempDir()
	plan := func(label string, extra ...string) results.PlanRow {
		args := append([]string{"plan", "--workload", "voice", "--rate", "0.5", "--models", "gemma-3-12b", "--gpus", "h100-80gb", "--tp", "1",
			"--slo", "ttft_sched_p95:300", "--window", "2m", "--seeds", "1", "--max-replicas", "2", "--routing", "prefix-affinity",
			"--out-dir", dir, "--label", label}, extra...)
		code, out, errOut := execute(t, args...)
		if code != 0 && code != ExitFailed {
			t.Fatalf("%s: exit %d\n%s%s", label, code, out, errOut)
		}
		return readPlan(t, filepath.Join(dir, label+".json")).Rows[0]
	}
	if r := plan("defaults"); r.Meets {
		t.Errorf("vLLM's defaults: %d replicas meet it; want none of up to 2 (%s)", r.Replicas, r.Why)
	}
	if r := plan("threshold", "--long-prefill-token-threshold", "512"); !r.Meets || r.Replicas != 1 {
		t.Errorf("threshold 512: meets %v with %d replicas (%s); want 1 replica", r.Meets, r.Replicas, r.Why)
	}
	if code, _, errOut := execute(t, "plan", "--rate", "1", "--long-prefill-token-threshold", "-5", "--out-dir", dir); code != ExitUsage || !strings.Contains(errOut, "--long-prefill-token-threshold") {
		t.Errorf("a negative threshold: exit %d, %s", code, errOut)
	}
}

// TestPlanCallsRouteByPrefix: a plan of calls routes by prefix affinity
// unless --routing says otherwise, so a call's turns find its cached
// prompt: voice calls at 0.5/s on L40S replicas need four of them, where
// round robin, each turn landing on a replica without its call's prompt,
// meets it with none of up to six.
func TestPlanCallsRouteByPrefix(t *testing.T) {
	heavy(t)
	dir := t.TempDir()
	plan := func(label string, extra ...string) results.PlanRow {
		args := append([]string{"plan", "--workload", "voice", "--rate", "0.5", "--models", "gemma-3-12b", "--gpus", "l40s", "--tp", "1",
			"--slo", "ttft_sched_p95:300", "--long-prefill-token-threshold", "512", "--window", "2m", "--seeds", "1", "--max-replicas", "6",
			"--out-dir", dir, "--label", label}, extra...)
		code, out, errOut := execute(t, args...)
		if code != 0 && code != ExitFailed {
			t.Fatalf("%s: exit %d\n%s%s", label, code, out, errOut)
		}
		return readPlan(t, filepath.Join(dir, label+".json")).Rows[0]
	}
	if r := plan("default"); !r.Meets || r.Replicas != 4 || r.Routing != "prefix-affinity" {
		t.Errorf("default routing: meets %v, %d replicas, routing %q (%s); want 4 by prefix-affinity", r.Meets, r.Replicas, r.Routing, r.Why)
	}
	if r := plan("round-robin", "--routing", "round-robin"); r.Meets {
		t.Errorf("round robin: %d replicas meet it; want none of up to 6", r.Replicas)
	}
}
