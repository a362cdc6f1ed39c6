package cmd

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kneebench/knee/health/quiet"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator"
)

// TestSweepResetCache: knee sweep --reset-cache against knee sim drops
// its prefix cache before each level, and each level says so.
func TestSweepResetCache(t *testing.T) {
	t.Parallel()
	inBubble(t, testSweepResetCache)
}

func testSweepResetCache(t *testing.T) {
	url := startSim(t, "", "")
	dir := t.TempDir()
	code, out, errOut := execute(t, "sweep", "--reset-cache", "--base-url", url, "--model", "knee-sim", "--rates", "2,4", "--step-duration", "2s",
		"--input-tokens", "64", "--max-tokens", "8", "--out-dir", dir, "--label", "reset", "--no-server-metrics")
	if code != 0 && code != ExitFailed {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	sw, err := results.ReadSweep(filepath.Join(dir, "reset.json"))
	if err != nil || len(sw.Levels) != 2 {
		t.Fatalf("%v, %+v", err, sw)
	}
	for i, l := range sw.Levels {
		if l.Run == nil || !strings.Contains(strings.Join(l.Run.Notes, "\n"), "prefix cache was reset before this level (POST /reset_prefix_cache)") {
			t.Errorf("level %d does not say its cache was reset: %+v", i+1, l.Run)
		}
	}
}

// TestResetCacheRefusedFirst: a server with no reset endpoint (vLLM
// without its dev mode, llama.cpp) is refused before any request is sent,
// with what to do.
func TestResetCacheRefusedFirst(t *testing.T) {
	t.Parallel()
	inBubble(t, testResetCacheRefusedFirst)
}

func testResetCacheRefusedFirst(t *testing.T) {
	var completions atomic.Int64
	url := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/completions") {
			completions.Add(1)
		}
		http.NotFound(w, r)
	}))
	dir := t.TempDir()
	code, out, errOut := execute(t, "run", "--reset-cache", "--base-url", url+"/v1", "--model", "m", "--rate", "1", "--duration", "2s",
		"--no-server-metrics", "--output", filepath.Join(dir, "r.json"))
	if code != ExitRuntime || !strings.Contains(errOut, "VLLM_SERVER_DEV_MODE=1") {
		t.Errorf("exit %d, %s%s; want a runtime error naming vLLM's dev mode", code, out, errOut)
	}
	if n := completions.Load(); n != 0 {
		t.Errorf("%d requests were sent before the refusal", n)
	}
}

// TestRunProfile: knee run --profile starts knee sim's profiler after the
// warm-up and stops it once the window drained, leaving its profile in
// knee sim's --profile-dir; a server with no profiler leaves the level a
// warning saying so, and the level is measured all the same.
//
// It runs on the wall clock: a CPU profile's writer waits in a system
// call, which a synctest bubble cannot wait out.
func TestRunProfile(t *testing.T) {
	t.Parallel()
	quiet.Wire(t, func() { testRunProfile(t) })
}

func testRunProfile(t *testing.T) {
	profiles := t.TempDir()
	url := startSimOptions(t, "", "builtin:bench-responses", func(o *simulator.Options) { o.ProfileDir = profiles })
	dir := t.TempDir()
	out := filepath.Join(dir, "p.json")
	code, stdout, errOut := execute(t, "run", "--profile", "--base-url", url, "--model", "knee-sim", "--rate", "4", "--duration", "1s",
		"--input-tokens", "32", "--max-tokens", "4", "--no-server-metrics", "--output", out)
	if code != 0 && code != ExitFailed {
		t.Fatalf("exit %d\n%s%s", code, stdout, errOut)
	}
	r, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "profiler ran over this level's measured window only") {
		t.Errorf("notes %q, warnings %q", r.Notes, r.Warnings)
	}
	if st, err := os.Stat(filepath.Join(profiles, "knee-sim-profile-1.pprof")); err != nil || st.Size() == 0 {
		t.Errorf("no profile written: %v", err)
	}

	plain := startSim(t, "", "")
	code, stdout, errOut = execute(t, "run", "--profile", "--base-url", plain, "--model", "knee-sim", "--rate", "4", "--duration", "1s",
		"--input-tokens", "32", "--max-tokens", "4", "--no-server-metrics", "--output", out)
	if code != 0 && code != ExitFailed {
		t.Fatalf("exit %d\n%s%s", code, stdout, errOut)
	}
	if r, err = results.ReadRun(out); err != nil {
		t.Fatal(err)
	}
	if r.Requests.OK == 0 || !strings.Contains(strings.Join(r.Warnings, "\n"), "offers no profiler") {
		t.Errorf("without a profiler: %d ok, warnings %q", r.Requests.OK, r.Warnings)
	}
}
