package report

import (
	"strings"
	"testing"
	"time"
)

// streamsOpened is how many event streams viewers have opened.
func (d *Dashboard) streamsOpened() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.opened
}

// waitForStreams waits until n event streams were opened.
func waitForStreams(t *testing.T, d *Dashboard, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for d.streamsOpened() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d event streams opened in a minute, want %d", d.streamsOpened(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDashboardInChromium: a browser on the live view follows a sweep as
// it runs (a level's end redraws the page, which opens its event stream
// again) and, when it ends, becomes the report: the final page, drawn
// whole, with nothing wider than the window.
func TestDashboardInChromium(t *testing.T) {
	bin := browser()
	if bin == "" || testing.Short() {
		t.Skip("no Chromium here (Debian: apt-get install chromium)")
	}
	d, err := StartDashboard("127.0.0.1:0", "test")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sweep := pageSweep(t, "live.json")
	dom := make(chan string, 1)
	go func() { dom <- openInBrowser(t, bin, d.URL()+"#knee-selfcheck", 1400) }()
	for i := range sweep.Levels {
		waitForStreams(t, d, i+1)
		d.Status(LiveStatus{Level: "level", ElapsedS: 1, Sent: 10, OK: 9, InFlight: 1, TTFTP50: 20, TTFTP95: 30, RecentCount: 9, Health: "healthy"})
		so := *sweep
		so.Levels = sweep.Levels[:i+1]
		so.FindKnees()
		d.Sweep(&so)
	}
	waitForStreams(t, d, len(sweep.Levels)+1)
	d.Done(30 * time.Second)
	page := <-dom
	if !strings.Contains(page, "<h1>knee — sweep live</h1>") {
		t.Fatalf("the view did not become the report:\n%.2000s", page)
	}
	sc := readSelfCheck(t, page)
	if sc.Overflow > 0 || len(sc.Charts) < 8 {
		t.Errorf("the report in the browser: %g px too wide, %d charts", sc.Overflow, len(sc.Charts))
	}
	for _, c := range sc.Charts {
		if c.Marks == 0 {
			t.Errorf("chart %s drew nothing", c.ID)
		}
	}
}
