package cmd

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/bench/driver"
)

// TestMessageInFlagTerms checks that the library's errors of options
// reach the user in flags' terms, alone, wrapped and joined.
func TestMessageInFlagTerms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{driver.ErrLoadMode, "give exactly one of --concurrency and --rate"},
		{driver.Load{Rate: 1, Concurrency: 2, Requests: 1, Burstiness: 1}.Validate(), "give exactly one of --concurrency and --rate"},
		{driver.Load{Rate: 1, Burstiness: 1}.Validate(), "give --requests or --duration"},
		{driver.Load{}.Validate(), "give exactly one of --concurrency and --rate\ngive --requests or --duration"},
		{bench.Calls{}.Validate(), "calls need --rate (calls per second)\ngive --calls or --duration"},
		{usageErr("%w", driver.ErrUnbounded), "give --requests or --duration"},
		{withCode(ExitRuntime, errors.New("plain")), "plain"},
		{fmt.Errorf("level 2: %w", errors.Join(driver.ErrUnbounded, errors.New("other"))), "level 2: give --requests or --duration\nother"},
	} {
		if got := message(tc.err); got != tc.want {
			t.Errorf("message(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestUsageHints: a mistyped flag gets the nearest one, another command's
// flag names that command, exclusive flags are said in knee's words, and
// vLLM's goodput form is taken: all before anything is sent.
func TestUsageHints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--rats", "2"}, "did you mean --rate?"},
		{[]string{"run", "--rates", "1,2"}, "--rates is a flag of knee predict and sweep)"},
		{[]string{"run", "--step-duration", "1s"}, "--step-duration is a flag of knee predict and sweep)"},
		{[]string{"run", "--rate", "1", "--concurrency", "2", "--base-url", "http://127.0.0.1:1/v1"}, "--concurrency and --rate cannot be given together"},
		{[]string{"run", "--max-tokens", "0", "--base-url", "http://127.0.0.1:1/v1"}, "--max-tokens must be at least 1"},
		{[]string{"run", "--goodput", "ttft:300", "vibes", "--base-url", "http://127.0.0.1:1/v1"}, `run takes flags only, and "vibes" is none: a flag's value with a space in it needs quotes`},
	} {
		code, _, errOut := execute(t, tc.args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, errOut, ExitUsage, tc.want)
		}
	}
	// The space-separated form reaches the parser: an unknown metric is its
	// error, not cobra's.
	if code, _, errOut := execute(t, "run", "--goodput", "ttft:300", "vibes:5", "--base-url", "http://127.0.0.1:1/v1"); code != ExitUsage ||
		!strings.Contains(errOut, "vibes") || strings.Contains(errOut, "unknown command") {
		t.Errorf("--goodput ttft:300 vibes:5: exit %d, %q", code, errOut)
	}
}

// TestContextChecked: a request that cannot fit the context the server
// lists (max_model_len) is refused before anything is sent.
func TestContextChecked(t *testing.T) {
	t.Parallel()
	inBubble(t, testContextChecked)
}

func testContextChecked(t *testing.T) {
	url := startSim(t, "", "")
	for _, args := range [][]string{
		{"run", "--base-url", url, "--model", "knee-sim", "--input-tokens", "200000", "--requests", "1"},
		{"sweep", "--base-url", url, "--model", "knee-sim", "--workload", "voice", "--rates", "1", "--system-prompt-tokens", "140000", "--out-dir", t.TempDir()},
		// validate's call too (its 18,000-token default outgrew a
		// llama-server slot of 8,192 in its server's words, after the
		// probes).
		{"validate", "--base-url", url, "--model", "knee-sim", "--system-prompt-tokens", "140000"},
	} {
		code, out, errOut := execute(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, "past the 131072-token context") || strings.Contains(out, "ok") {
			t.Errorf("%v: exit %d, %q", args[:2], code, errOut)
		}
	}
}
