package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kneebench/knee/results"
)

// LiveStatus is a running level as the live view shows it.
type LiveStatus struct {
	Level      string  `json:"level"`
	ElapsedS   float64 `json:"elapsedS"`
	RemainingS float64 `json:"remainingS"`
	Sent       int64   `json:"sent"`
	OK         int64   `json:"ok"`
	Failed     int64   `json:"failed"`
	InFlight   int64   `json:"inFlight"`
	// TTFT (from the schedule) and ITL percentiles are over the requests
	// that ended in the last few seconds (RecentCount of them);
	// LevelTTFTP95 is over the level so far.
	TTFTP50       float64 `json:"ttftP50"`
	TTFTP95       float64 `json:"ttftP95"`
	ITLP50        float64 `json:"itlP50"`
	ITLP95        float64 `json:"itlP95"`
	RecentCount   int64   `json:"recentCount"`
	LevelTTFTP95  float64 `json:"levelTtftP95"`
	OfferedPerS   float64 `json:"offeredPerS,omitempty"`
	SentPerS      float64 `json:"sentPerS"`
	TimerLagP99Ms float64 `json:"timerLagP99Ms"`
	CPUPercent    float64 `json:"cpuPercent"`
	Health        string  `json:"health"`
	LevelsDone    int     `json:"levelsDone"`
	Levels        int     `json:"levels,omitempty"`
	// The server's gauges as last read, when they are (--no-server-metrics
	// off and the server publishes them): ServerAtS is their instant in
	// seconds into the level, KV cache use is in %.
	ServerAtS       float64  `json:"serverAtS,omitempty"`
	ServerRunning   *float64 `json:"serverRunning,omitempty"`
	ServerWaiting   *float64 `json:"serverWaiting,omitempty"`
	ServerKVPercent *float64 `json:"serverKvPercent,omitempty"`
}

// Dashboard serves a live view of a run or a sweep while it runs: the page
// at /, which redraws as levels finish, and server-sent events at /events
// (progress about twice a second, a finished level, the end). When the
// work ends the page becomes its report. It only reads what it is handed:
// the load loop never waits on it.
type Dashboard struct {
	ln      net.Listener
	srv     *http.Server
	version string

	mu      sync.Mutex
	in      HTMLInput // the sweep or run so far
	status  []byte    // the last progress, as JSON
	history []LiveStatus
	final   []byte // the report, once done
	clients map[chan event]struct{}
	served  sync.WaitGroup
	levels  int // levels shown
	opened  int // event streams opened, for tests
}

// DoneGrace is how long the view's viewers get to take the report once
// the work ended, before it stops serving.
const DoneGrace = 2 * time.Second

type event struct {
	name string
	data []byte
}

// DashboardAddress reads --dashboard: PORT or :PORT listen on loopback,
// HOST:PORT where asked.
func DashboardAddress(s string) (string, error) {
	if !strings.Contains(s, ":") {
		s = ":" + s
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || port == "" {
		return "", fmt.Errorf("%q: want PORT, or HOST:PORT", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("%q: the port must be a number from 0 to 65535 (0: any free one)", s)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// StartDashboard listens on addr and serves the live view to requests
// that name it: by a literal address, as localhost, or by one of names
// (see hostGuard).
func StartDashboard(addr, version string, names ...string) (*Dashboard, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	d := &Dashboard{ln: ln, version: version, clients: map[chan event]struct{}{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/", d.page)
	mux.HandleFunc("/events", d.events)
	g := hostGuard{next: mux}
	for _, n := range names {
		g.names = append(g.names, strings.ToLower(strings.TrimSuffix(n, ".")))
	}
	d.srv = &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = d.srv.Serve(ln) }()
	return d, nil
}

// URL is where the live view is.
func (d *Dashboard) URL() string { return "http://" + d.ln.Addr().String() + "/" }

// A nil *Dashboard (no live view asked) takes everything and does
// nothing.

// Status takes a running level's progress, to show and push.
func (d *Dashboard) Status(s LiveStatus) {
	if d == nil {
		return
	}
	b, err := json.Marshal(s)
	if err != nil {
		return
	}
	d.mu.Lock()
	d.status = b
	d.history = appendHistory(d.history, s)
	d.mu.Unlock()
	d.broadcast(event{"progress", b})
}

// Sweep takes the sweep so far: when it has a level more, the page
// redraws. It keeps a copy, so the sweep may go on growing.
func (d *Dashboard) Sweep(s *results.Sweep) {
	if d == nil {
		return
	}
	cp := *s
	cp.Levels = slices.Clone(s.Levels)
	d.mu.Lock()
	grew := len(cp.Levels) != d.levels
	d.in, d.levels = HTMLInput{Sweeps: []*results.Sweep{&cp}}, len(cp.Levels)
	d.mu.Unlock()
	if grew {
		d.broadcast(event{"level", []byte(fmt.Sprint(len(cp.Levels)))})
	}
}

// Run takes a finished run.
func (d *Dashboard) Run(r *results.Run) {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.in = HTMLInput{Runs: []*results.Run{r}}
	d.mu.Unlock()
	d.broadcast(event{"level", []byte("1")})
}

// Done makes the page the report and tells every viewer, waiting up to
// grace for the viewers to take it before it returns.
func (d *Dashboard) Done(grace time.Duration) {
	if d == nil {
		return
	}
	d.mu.Lock()
	in := d.in
	d.mu.Unlock()
	in.Version = d.version
	var page bytes.Buffer
	if err := HTML(&page, in); err != nil {
		return
	}
	d.mu.Lock()
	d.final = page.Bytes()
	d.mu.Unlock()
	b, _ := json.Marshal(page.String())
	d.broadcast(event{"done", b})
	wait := make(chan struct{})
	go func() { d.served.Wait(); close(wait) }()
	select {
	case <-wait:
	case <-time.After(grace):
	}
}

// maxHistory bounds the progress kept for the live view's time series:
// past it, every other sample goes (a day at two a second is 172,800).
const maxHistory = 1200

// appendHistory appends s to h, thinning h by half when it is full. A
// new level starts its own history: the view plots one level's progress
// against its own seconds, never a line from one level's end to the
// next's start (the finished levels are the sweep's table and curves).
func appendHistory(h []LiveStatus, s LiveStatus) []LiveStatus {
	if n := len(h); n > 0 && (h[n-1].Level != s.Level || s.ElapsedS < h[n-1].ElapsedS) {
		h = h[:0]
	}
	if len(h) >= maxHistory {
		n := 0
		for i := 0; i < len(h); i += 2 {
			h[n] = h[i]
			n++
		}
		h = h[:n]
	}
	return append(h, s)
}

// Page is the final page once Done made it, or nil.
func (d *Dashboard) Page() []byte {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.final
}

// Close stops serving.
func (d *Dashboard) Close() {
	if d == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = d.srv.Shutdown(ctx)
}

func (d *Dashboard) broadcast(e event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for c := range d.clients {
		select {
		case c <- e:
		default:
			// A slow viewer misses a progress beat, never the load.
		}
	}
}

// page serves the live view, or the report once done.
func (d *Dashboard) page(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	d.mu.Lock()
	final, in := d.final, d.in
	d.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if final != nil {
		_, _ = w.Write(final)
		return
	}
	d.mu.Lock()
	in.LiveHistory = slices.Clone(d.history)
	d.mu.Unlock()
	in.Version, in.Dashboard = d.version, "/events"
	var page bytes.Buffer
	if err := HTML(&page, in); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(page.Bytes())
}

// events streams progress, finished levels and the end as server-sent
// events, starting with the last progress known.
func (d *Dashboard) events(w http.ResponseWriter, r *http.Request) {
	f, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	c := make(chan event, 16)
	d.mu.Lock()
	final, status := d.final, d.status
	if final == nil {
		d.clients[c] = struct{}{}
		d.served.Add(1)
	}
	d.opened++
	d.mu.Unlock()
	if final != nil {
		b, _ := json.Marshal(string(final))
		_ = writeEvent(w, event{"done", b})
		f.Flush()
		return
	}
	defer func() {
		d.mu.Lock()
		delete(d.clients, c)
		d.mu.Unlock()
		d.served.Done()
	}()
	if status != nil {
		_ = writeEvent(w, event{"progress", status})
	}
	f.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case e := <-c:
			if err := writeEvent(w, e); err != nil {
				return
			}
			f.Flush()
			if e.name == "done" {
				return
			}
		}
	}
}

func writeEvent(w http.ResponseWriter, e event) error {
	if bytes.ContainsAny(e.data, "\r\n") {
		return errors.New("an event's data is one line of JSON")
	}
	_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, e.data)
	return err
}

// LiveStatusOf is the live view's status for a level's progress: level
// names it, done of levels have ended, window is its length (0: not a
// timed window) and offered its offered rate (0: closed loop).
func LiveStatusOf(p results.Progress, level string, done, levels int, window time.Duration, offered float64) LiveStatus {
	s := LiveStatus{Level: level, ElapsedS: p.Elapsed.Seconds(), Sent: p.Sent, OK: p.OK, Failed: p.Errors, InFlight: p.InFlight,
		TTFTP50: p.RecentTTFTP50ms, TTFTP95: p.RecentTTFTP95ms, ITLP50: p.RecentITLP50ms, ITLP95: p.RecentITLP95ms, RecentCount: p.RecentCount,
		LevelTTFTP95: p.TTFTP95ms, OfferedPerS: offered, TimerLagP99Ms: p.TimerLagP99ms, CPUPercent: p.CPUPercent, Health: p.Health,
		LevelsDone: done, Levels: levels}
	if window > 0 {
		s.RemainingS = max(0, (window - p.Elapsed).Seconds())
	}
	if p.Elapsed > 0 {
		s.SentPerS = float64(p.Sent) / p.Elapsed.Seconds()
	}
	if g := p.Server; g != nil {
		s.ServerAtS, s.ServerRunning, s.ServerWaiting = g.AtS, g.Running, g.Waiting
		if g.KVCacheUsage != nil {
			pct := 100 * *g.KVCacheUsage
			s.ServerKVPercent = &pct
		}
	}
	return s
}
