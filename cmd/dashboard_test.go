package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/health/quiet"
	"github.com/kneebench/knee/results"

	"github.com/kneebench/knee/report"
)

// freePort is a loopback port nobody listens on (for a moment).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

type sse struct{ name, data string }

// readEvents reads server-sent events from url until "done" or the
// stream ends.
func readEvents(ctx context.Context, url string) ([]sse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		return nil, fmt.Errorf("content type %q", ct)
	}
	var events []sse
	var cur sse
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		case line == "":
			events = append(events, cur)
			if cur.name == "done" {
				return events, nil
			}
			cur = sse{}
		}
	}
	return events, sc.Err()
}

// TestDashboardFollowsASweep: an HTTP client on --dashboard's event
// stream during a short sweep sees the running level's progress (counts
// that only grow within a level, recent latencies once requests end, the
// client's health), one event per finished level, and at the end the
// report itself; the page served while it runs is the live view.
func TestDashboardFollowsASweep(t *testing.T) {
	slow(t)
	t.Parallel()
	quiet.Wire(t, func() { testDashboardFollowsASweep(t) })
}

func testDashboardFollowsASweep(t *testing.T) {
	dir, url := t.TempDir(), startSim(t, "", "")
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	type result struct {
		code        int
		out, errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := execute(t, "sweep", "--base-url", url, "--model", "knee-sim", "--rates", "4,8", "--step-duration", "1500ms", "--input-tokens", "256", "--max-tokens", "32",
			"--out-dir", dir, "--label", "dash", "--dashboard", addr)
		done <- result{code, out, errOut}
	}()
	base := "http://" + addr
	var live string
	for deadline := time.Now().Add(30 * time.Second); ; {
		if resp, err := http.Get(base + "/"); err == nil {
			var b strings.Builder
			_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
			resp.Body.Close()
			live = b.String()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the live view never answered")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(live, "<title>knee — live") || !strings.Contains(live, `connect-src 'self'`) {
		t.Errorf("the page at / is not the live view:\n%.600s", live)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	events, err := readEvents(ctx, base+"/events")
	if err != nil {
		t.Fatalf("the event stream: %v (after %d events)", err, len(events))
	}
	r := <-done
	if r.code != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	if !strings.Contains(r.errOut, "live view at "+base+"/") {
		t.Errorf("the sweep did not say where its live view is:\n%s", r.errOut)
	}
	var progress, levels int
	var last report.LiveStatus
	sawRecent, sawServer := false, false
	for _, e := range events {
		switch e.name {
		case "progress":
			var s report.LiveStatus
			if err := json.Unmarshal([]byte(e.data), &s); err != nil {
				t.Fatalf("a progress event: %v: %s", err, e.data)
			}
			if s.Level == last.Level && (s.Sent < last.Sent || s.OK < last.OK) {
				t.Errorf("counts went back within %s: %+v after %+v", s.Level, s, last)
			}
			if s.Health == "" || s.Levels != 2 || s.OfferedPerS == 0 {
				t.Errorf("a progress event lacks the health, the levels or the offered rate: %+v", s)
			}
			if s.RecentCount > 0 && s.TTFTP50 > 0 && s.ITLP50 > 0 && s.TTFTP95 >= s.TTFTP50 {
				sawRecent = true
			}
			if s.ServerRunning != nil && s.ServerWaiting != nil && s.ServerKVPercent != nil {
				if s.ServerAtS <= 0 || s.ServerAtS > s.ElapsedS+1 || *s.ServerKVPercent < 0 || *s.ServerKVPercent > 100 {
					t.Errorf("the server's gauges in a progress event: %+v", s)
				}
				sawServer = true
			}
			last = s
			progress++
		case "level":
			levels++
		}
	}
	if progress < 4 || levels != 2 || !sawServer {
		t.Errorf("%d progress events (want several), %d level events (want 2), the server's gauges seen: %v", progress, levels, sawServer)
	}
	// Recent latencies need a progress beat after requests ended: timing,
	// judged only where the sweep's client judged itself fit to time.
	if !sawRecent {
		if v := worstLevelVerdict(t, filepath.Join(dir, "dash.json")); quiet.Judgeable(v) {
			t.Errorf("no progress event carried recent latencies (the client was %s)", v)
		} else {
			t.Logf("no recent latencies seen, not judged: the client was %s", v)
		}
	}
	final := events[len(events)-1]
	var page string
	if final.name != "done" || json.Unmarshal([]byte(final.data), &page) != nil {
		t.Fatalf("the stream did not end with the report: %q", final.name)
	}
	if !strings.Contains(page, "<title>knee — sweep dash</title>") || strings.Contains(page, "connect-src") {
		t.Errorf("the report at the end is not the sweep's own page:\n%.600s", page)
	}
	if _, err := http.Get(base + "/"); err == nil {
		t.Error("the live view still serves after the sweep ended")
	}
	if _, err := os.Stat(filepath.Join(dir, "dash.json")); err != nil {
		t.Errorf("the sweep's own files: %v", err)
	}
	// A viewer who comes late reads the final page beside the results.
	kept, err := os.ReadFile(filepath.Join(dir, "dash.html"))
	if err != nil || string(kept) != page {
		t.Errorf("the final page was not kept beside the results (%v)", err)
	}
	if !strings.Contains(r.errOut, "its final page is written to "+filepath.Join(dir, "dash.html")) ||
		!strings.Contains(r.out, "wrote "+filepath.Join(dir, "dash.html")+" (the live view's final page)") {
		t.Errorf("the sweep did not say where the final page goes:\n%s\n%s", r.errOut, r.out)
	}
}

// worstLevelVerdict is the first of a sweep file's levels whose client
// health does not let a test judge timing, else the first level's.
func worstLevelVerdict(t *testing.T, path string) string {
	t.Helper()
	sw, err := results.ReadSweep(path)
	if err != nil || len(sw.Levels) == 0 {
		t.Fatalf("the sweep's file: %v", err)
	}
	for _, l := range sw.Levels {
		if l.Run != nil && !quiet.Judgeable(l.Run.Health.Verdict) {
			return l.Run.Health.Verdict
		}
	}
	if sw.Levels[0].Run == nil {
		return ""
	}
	return sw.Levels[0].Run.Health.Verdict
}
