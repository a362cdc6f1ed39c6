package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
)

// browser is the headless Chromium the page tests use, or "" where none is
// installed (Debian: apt-get install chromium).
func browser() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// selfCheck is what a page writes back when opened with #knee-selfcheck:
// how far it overflows the window, the marks each chart drew, how many
// resources it loaded, and the SLO explorer's answer to the question in
// the address.
type selfCheck struct {
	Overflow  float64 `json:"overflow"`
	Resources int     `json:"resources"`
	Charts    []struct {
		ID       string   `json:"id"`
		Marks    int      `json:"marks"`
		Overlaps []string `json:"overlaps"`
		Outside  int      `json:"outside"`
	} `json:"charts"`
	// Cells are the table cells whose text overflows them.
	Cells    []string `json:"cells"`
	Explorer *struct {
		Load         *float64 `json:"load"`
		Interpolated bool     `json:"interpolated"`
		Text         string   `json:"text"`
	} `json:"explorer"`
}

var selfCheckOut = regexp.MustCompile(`(?s)<pre id="knee-selfcheck">(.*?)</pre>`)

// openInBrowser loads url in a fresh headless Chromium of the given width
// and returns the DOM its script built. Headless Chromium now and then
// dies of a signal on this machine (a segmentation fault, seen by hand
// too) before it has read the page: that is the browser's failure, not
// the page's, so a crash is tried once more; a second, an error exit or
// the time running out fail the test.
func openInBrowser(t *testing.T, bin, url string, width int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for attempt := 1; ; attempt++ {
		// A profile of its own per run: two browsers sharing one fail.
		profile, err := os.MkdirTemp(t.TempDir(), "profile-")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, bin, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+profile,
			fmt.Sprintf("--window-size=%d,1000", width), "--virtual-time-budget=5000", "--dump-dom", url)
		out, err := cmd.Output()
		if err == nil {
			return string(out)
		}
		var exit *exec.ExitError
		crashed := errors.As(err, &exit) && !exit.Exited() && ctx.Err() == nil
		if !crashed || attempt == 2 {
			t.Fatalf("chromium %s at %d px: %v", url, width, err)
		}
		t.Logf("chromium died (%v) at %d px; trying once more", err, width)
	}
}

func readSelfCheck(t *testing.T, dom string) selfCheck {
	t.Helper()
	m := selfCheckOut.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the page wrote no self-check; its script did not run to the end")
	}
	var sc selfCheck
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &sc); err != nil {
		t.Fatalf("the self-check %q: %v", m[1], err)
	}
	return sc
}

// checkLayout fails a page that is wider than its window, loads
// anything, draws fewer than charts charts, a chart with no marks, with
// marks outside itself or labels over each other, or a table cell its
// text overflows.
func checkLayout(t *testing.T, sc selfCheck, charts int) {
	t.Helper()
	if sc.Overflow > 0 {
		t.Errorf("the page is %g px wider than the window", sc.Overflow)
	}
	if sc.Resources != 0 {
		t.Errorf("the page loaded %d resources", sc.Resources)
	}
	if len(sc.Charts) < charts {
		t.Errorf("%d charts drawn, want at least %d", len(sc.Charts), charts)
	}
	for _, c := range sc.Charts {
		if c.Marks == 0 {
			t.Errorf("chart %s drew nothing", c.ID)
		}
		if len(c.Overlaps) > 0 {
			t.Errorf("chart %s draws labels over each other: %q", c.ID, c.Overlaps)
		}
		if c.Outside > 0 {
			t.Errorf("chart %s draws %d marks outside itself", c.ID, c.Outside)
		}
	}
	if len(sc.Cells) > 0 {
		t.Errorf("%d table cells overflow their box: %q", len(sc.Cells), sc.Cells)
	}
}

// TestPagesInChromium opens every kind of page in a headless Chromium at
// 800 and 1400 px, as a reader would, and reads back what its script
// built: nothing wider than the window, every chart drawn with marks,
// nothing loaded from anywhere, and the SLO explorer's answer to a known
// case. Skipped where no Chromium is installed.
func TestPagesInChromium(t *testing.T) {
	quiet.Wire(t, func() { testPagesInChromium(t) })
}

func testPagesInChromium(t *testing.T) {
	bin := browser()
	if bin == "" || testing.Short() {
		t.Skip("no Chromium here (Debian: apt-get install chromium)")
	}
	dir := t.TempDir()
	for _, k := range pageKinds {
		page := filepath.Join(dir, k.name+".html")
		if err := os.WriteFile(page, renderPage(t, k), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, width := range []int{800, 1400} {
			t.Run(fmt.Sprintf("%s-%d", k.name, width), func(t *testing.T) {
				t.Parallel()
				url := "file://" + page + "#knee-selfcheck"
				if k.explore != "" {
					url += "&explore=" + k.explore
				}
				sc := readSelfCheck(t, openInBrowser(t, bin, url, width))
				checkLayout(t, sc, k.charts)
				if k.explore != "" {
					e := sc.Explorer
					if e == nil || e.Load == nil || math.Abs(*e.Load-k.want) > 1e-9 || e.Interpolated != k.interpolated ||
						e.Interpolated != strings.Contains(e.Text, "interpolated") {
						t.Errorf("the SLO explorer answered %+v, want %g (interpolated: %v)", e, k.want, k.interpolated)
					}
				}
			})
		}
	}
}
