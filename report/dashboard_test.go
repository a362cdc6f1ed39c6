package report

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
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

// browserAndDashboard is Chromium and a live view on loopback, closed
// when the test ends; the test skips without a browser.
func browserAndDashboard(t *testing.T) (string, *Dashboard) {
	t.Helper()
	bin := browser()
	if bin == "" || testing.Short() {
		t.Skip("no Chromium here (Debian: apt-get install chromium)")
	}
	d, err := StartDashboard("127.0.0.1:0", "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return bin, d
}

// TestDashboardInChromium: a browser on the live view follows a sweep as
// it runs (a level's end redraws the page, which opens its event stream
// again) and, when it ends, becomes the report: the final page, drawn
// whole, with nothing wider than the window.
func TestDashboardInChromium(t *testing.T) {
	quiet.Wire(t, func() { testDashboardInChromium(t) })
}

func testDashboardInChromium(t *testing.T) {
	bin, d := browserAndDashboard(t)
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
	checkLayout(t, readSelfCheck(t, page), 8)
}

// TestDashboardAnswersOnlyItsOwnHost: the live view answers requests that
// name it by a literal address, localhost or a name given, and refuses
// any other Host (a page resolving its own name to this address: DNS
// rebinding) and reads from another origin.
func TestDashboardAnswersOnlyItsOwnHost(t *testing.T) {
	d, err := StartDashboard("127.0.0.1:0", "test", "bench-box.lan")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	port := d.ln.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		host, origin, site string
		want               int
	}{
		{fmt.Sprintf("127.0.0.1:%d", port), "", "", 200},
		{fmt.Sprintf("localhost:%d", port), "", "", 200},
		{fmt.Sprintf("[::1]:%d", port), "", "", 200},
		{fmt.Sprintf("bench-box.lan:%d", port), "", "", 200},
		{fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("http://127.0.0.1:%d", port), "same-origin", 200},
		{"evil.example", "", "", http.StatusMisdirectedRequest},
		{fmt.Sprintf("evil.example:%d", port), "", "", http.StatusMisdirectedRequest},
		{fmt.Sprintf("127.0.0.1:%d", port), "http://evil.example", "", http.StatusForbidden},
		{fmt.Sprintf("127.0.0.1:%d", port), "", "cross-site", http.StatusForbidden},
	} {
		for _, path := range []string{"/", "/events"} {
			if path == "/events" && tc.want == 200 {
				continue // an answered stream runs on; the page shows it is answered
			}
			req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d%s", port, path), nil)
			req.Host = tc.host
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.site != "" {
				req.Header.Set("Sec-Fetch-Site", tc.site)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			resp, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
			resp.Body.Close()
			cancel()
			if resp.StatusCode != tc.want {
				t.Errorf("Host %q Origin %q Sec-Fetch-Site %q %s: %d, want %d", tc.host, tc.origin, tc.site, path, resp.StatusCode, tc.want)
			}
			if tc.want != 200 && strings.Contains(string(body), "<html") {
				t.Errorf("Host %q %s: the page was served to a refused request", tc.host, path)
			}
		}
	}
}

// TestDashboardAddress: a PORT or HOST:PORT, the host loopback when left
// out; a port outside 0-65535 is a usage error, before anything listens
// (--dashboard 99999 once failed at the listen, exit 3).
func TestDashboardAddress(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"8080", "127.0.0.1:8080"}, {"0", "127.0.0.1:0"}, {"0.0.0.0:9000", "0.0.0.0:9000"}, {"[::1]:7", "[::1]:7"},
		{"99999", ""}, {"-1", ""}, {"http", ""}, {"host:", ""},
	} {
		got, err := DashboardAddress(c.in)
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestLiveViewDrawsProgressOverTime: a run's live view opened late draws
// the progress so far (kept by the server and embedded in the page) as
// time series under its status, not only the last status: the client's
// latencies and rates, and the server's gauges under them. The page the
// server would serve is opened from a file, where its event stream fails
// at once (a browser left on the live stream never finishes loading).
func TestLiveViewDrawsProgressOverTime(t *testing.T) {
	quiet.Wire(t, func() { testLiveViewDrawsProgressOverTime(t) })
}

func testLiveViewDrawsProgressOverTime(t *testing.T) {
	bin, d := browserAndDashboard(t)
	for i := 1; i <= 8; i++ {
		running, waiting, kv := 4.0, float64(i), 10*float64(i)
		d.Status(LiveStatus{Level: "run", ElapsedS: float64(i), Sent: int64(10 * i), OK: int64(9 * i), InFlight: 3, TTFTP50: 20 + float64(i),
			TTFTP95: 30 + float64(i), ITLP50: 8, RecentCount: 9, SentPerS: 10, Health: "healthy",
			ServerAtS: float64(i) - 0.3, ServerRunning: &running, ServerWaiting: &waiting, ServerKVPercent: &kv})
	}
	resp, err := http.Get(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	live, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	file := filepath.Join(t.TempDir(), "live.html")
	if err := os.WriteFile(file, live, 0o644); err != nil {
		t.Fatal(err)
	}
	page := openInBrowser(t, bin, "file://"+file, 1400)
	for _, id := range []string{`id="live-latency"`, `id="live-rates"`, `id="live-server"`, `id="live-kv"`} {
		i := strings.Index(page, id)
		if i < 0 || !strings.Contains(page[i:min(len(page), i+20000)], "<path") {
			t.Errorf("the live view drew no %s series:\n%.3000s", id, page)
		}
	}
}

// TestHistoryIsBounded: the progress kept for the live view is thinned by
// half when full, its first and last samples kept.
func TestHistoryIsBounded(t *testing.T) {
	var h []LiveStatus
	for i := 0; i < 10*maxHistory; i++ {
		h = appendHistory(h, LiveStatus{ElapsedS: float64(i)})
	}
	if len(h) > maxHistory || h[0].ElapsedS != 0 || h[len(h)-1].ElapsedS != float64(10*maxHistory-1) {
		t.Errorf("%d kept, from %g to %g", len(h), h[0].ElapsedS, h[len(h)-1].ElapsedS)
	}
}

// TestHistoryHoldsOneLevel: the progress kept for a page opened mid-sweep
// is the running level's alone, so its charts draw no line from one
// level's end to the next's start.
func TestHistoryHoldsOneLevel(t *testing.T) {
	var h []LiveStatus
	for _, level := range []string{"2/s", "4/s"} {
		for i := range 5 {
			h = appendHistory(h, LiveStatus{Level: level, ElapsedS: float64(i)})
		}
	}
	if len(h) != 5 || h[0].Level != "4/s" || h[0].ElapsedS != 0 {
		t.Errorf("history %+v, want the 4/s level's five readings", h)
	}
	// A level repeated (--repeat) starts again too: its clock went back.
	h = appendHistory(h, LiveStatus{Level: "4/s", ElapsedS: 0.5})
	if len(h) != 1 {
		t.Errorf("history of %d readings after the level's clock went back, want 1", len(h))
	}
}
