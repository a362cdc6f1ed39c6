package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/results"
)

func sampleServerRun() *results.Run {
	r := sampleRun()
	r.StartedAt = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	r.Goodput = &results.Goodput{Bounds: map[string]float64{"ttft": 300}, Good: 190, Finished: 205, Share: 190.0 / 205, RequestsPerS: 18.5}
	v := func(x float64) *float64 { return &x }
	r.Server = &results.Server{Source: "vllm", BucketEstimates: true, Requests: 205, PromptTokens: 104960, OutputTokens: 26240,
		Figures: []results.Figure{
			{Name: "TTFT mean", Client: v(46.3), Server: v(44.0), Delivery: v(2.3)},
			{Name: "TTFT p50", Client: v(42.1), Server: v(60), ServerLow: v(40), ServerHigh: v(60), Estimate: true},
		},
		Warnings: []string{"the server counted 300 requests in the window, the client sent 205: other traffic"}}
	return r
}

// TestHTMLStructureGolden: the page of a run, and of two sweeps compared,
// with their sections, tables and warnings (plots left out, since their
// bytes have golden files of their own).
func TestHTMLStructureGolden(t *testing.T) {
	var run, sweeps bytes.Buffer
	if err := HTML(&run, HTMLInput{Runs: []*results.Run{sampleServerRun()}, Version: "test", NoImages: true}); err != nil {
		t.Fatal(err)
	}
	golden(t, "report_run.html", run.Bytes())
	a, b := sampleSweep("L40S", 1), sampleSweep("H100", 0.4)
	b.Config.Model = "other-model"
	if err := HTML(&sweeps, HTMLInput{Sweeps: []*results.Sweep{a, b}, Version: "test", NoImages: true}); err != nil {
		t.Fatal(err)
	}
	golden(t, "report_sweeps.html", sweeps.Bytes())
	for _, want := range []string{`<section id="comparison">`, `<section class="sweep" id="sweep-L40S">`, "differ in model", "SLO knee"} {
		if !strings.Contains(sweeps.String(), want) {
			t.Errorf("the sweeps page lacks %q", want)
		}
	}
}

// TestHTMLIsSelfContained: with its plots, the page references nothing
// outside itself (no http(s) source, link or script).
func TestHTMLIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, HTMLInput{Sweeps: []*results.Sweep{sampleSweep("L40S", 1)}, Runs: []*results.Run{sampleServerRun()}, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.Contains(page, `src="data:image/png;base64,`) {
		t.Error("the plot is not embedded")
	}
	if m := regexp.MustCompile(`(?i)(src|href)="https?:`).FindString(page); m != "" || strings.Contains(page, "<script") {
		t.Errorf("the page loads something from outside: %q", m)
	}
}

// TestHTMLRendersInChromium renders the page in a headless Chromium and
// reads the DOM it built. It is skipped where no browser is installed
// (apt-get install chromium).
func TestHTMLRendersInChromium(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" || testing.Short() {
		t.Skip("no Chromium here (apt-get install chromium)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := HTML(&b, HTMLInput{Sweeps: []*results.Sweep{sampleSweep("L40S", 1)}, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(page, b.Bytes(), 0o644)
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--dump-dom", "file://"+page)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	dom := string(out)
	for _, want := range []string{"Sweep L40S", "SLO knee", `<img class="plot"`, "<table>"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
}
