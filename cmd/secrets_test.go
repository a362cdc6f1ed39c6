package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretsNeverLeave: credentials in every form a user may give them —
// URL userinfo, a key in the query, --api-key, a credential-like header, a
// credential-like key in --extra-body — appear in no output: stdout,
// stderr, --output, --records, and the sweep's files.
func TestSecretsNeverLeave(t *testing.T) {
	t.Parallel()
	inBubble(t, testSecretsNeverLeave)
}

func testSecretsNeverLeave(t *testing.T) {
	url := startSim(t, "", "S3CR3T-KEY")
	host := strings.TrimPrefix(url, "http://")
	base := "http://alice:PA55WORD@" + host + "?api_key=QU3RYK3Y"
	dir := t.TempDir()
	out, records := filepath.Join(dir, "run.json"), filepath.Join(dir, "records.jsonl")
	common := []string{"--base-url", base, "--api-key", "S3CR3T-KEY", "--header", "X-Api-Key: H34D3R",
		"--extra-body", `{"ignore_eos":true,"auth_token":"B0DYT0K"}`, "--max-tokens", "4"}
	secrets := []string{"PA55WORD", "QU3RYK3Y", "S3CR3T-KEY", "H34D3R", "B0DYT0K"}
	check := func(what, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds %s", what, s)
			}
		}
	}
	code, stdout, stderr := execute(t, append([]string{"run", "--requests", "3", "--output", out, "--records", records}, common...)...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	check("run stdout", stdout)
	check("run stderr", stderr)
	for _, f := range []string{out, records} {
		b, _ := os.ReadFile(f)
		if len(b) == 0 {
			t.Errorf("%s is empty", f)
		}
		check(filepath.Base(f), string(b))
	}
	code, stdout, stderr = execute(t, append([]string{"sweep", "--rates", "2", "--step-duration", "1s", "--label", "s", "--out-dir", dir}, common...)...)
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, stdout, stderr)
	}
	check("sweep stdout", stdout)
	check("sweep stderr", stderr)
	for _, ext := range []string{".json", ".csv"} {
		b, _ := os.ReadFile(filepath.Join(dir, "s"+ext))
		check("sweep "+ext, string(b))
	}
	// A target that is down: the error message names the URL, redacted.
	_, _, stderr = execute(t, "run", "--base-url", "http://bob:PA55WORD@127.0.0.1:1/v1?token=QU3RYK3Y", "--requests", "1")
	check("error message", stderr)
}

// TestAuthorizationHeaderAndAPIKeyWarn: both given, the header wins and
// knee says so.
func TestAuthorizationHeaderAndAPIKeyWarn(t *testing.T) {
	t.Parallel()
	inBubble(t, testAuthorizationHeaderAndAPIKeyWarn)
}

func testAuthorizationHeaderAndAPIKeyWarn(t *testing.T) {
	url := startSim(t, "", "")
	_, _, stderr := execute(t, "run", "--base-url", url, "--api-key", "k", "--header", "Authorization: Bearer other", "--requests", "1", "--no-server-metrics")
	if !strings.Contains(stderr, "replaces the Bearer token of --api-key") {
		t.Errorf("no warning: %q", stderr)
	}
}
