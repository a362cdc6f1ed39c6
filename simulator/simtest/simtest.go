// Package simtest runs servers, knee's simulator among them, and the
// client that measures them inside a testing/synctest bubble over an
// in-memory network. Time in a
// bubble moves only when every goroutine in it waits, so a test of a
// minute's load takes the CPU the load costs and no wall time, and what
// it measures is exact: no scheduler, timer or neighbour on the host adds
// a microsecond. It is for tests only.
package simtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

// Net is an in-memory network of named hosts: servers listen on it,
// clients dial it. Made inside a bubble, its connections block as the
// bubble's clock needs (on channels, never on sockets).
type Net struct {
	mu    sync.Mutex
	hosts map[string]*fasthttputil.InmemoryListener
}

// Listen opens a listener on a new host of the network and returns it
// with its address (host:port, e.g. sim1.test:80).
func (n *Net) Listen() (net.Listener, string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.hosts == nil {
		n.hosts = map[string]*fasthttputil.InmemoryListener{}
	}
	addr := fmt.Sprintf("host%d.test:80", len(n.hosts)+1)
	ln := fasthttputil.NewInmemoryListener()
	n.hosts[addr] = ln
	return listener{ln}, addr
}

// listener hands out conns that fail as TCP's do.
type listener struct{ *fasthttputil.InmemoryListener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.InmemoryListener.Accept()
	if err != nil {
		return nil, err
	}
	return conn{c}, nil
}

// conn is one end of an in-memory connection that fails as a socket does:
// servers take a broken pipe for a client that went away, and clients
// class a passed deadline as a timeout.
type conn struct{ net.Conn }

func (c conn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	return n, tcpError("write", err)
}

func (c conn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	return n, tcpError("read", err)
}

// tcpError is err as a TCP socket would say it: a write to a closed peer
// is a broken pipe, a deadline passed is os.ErrDeadlineExceeded.
func tcpError(op string, err error) error {
	switch {
	case errors.Is(err, fasthttputil.ErrConnectionClosed):
		return &net.OpError{Op: op, Net: "tcp", Err: syscall.EPIPE}
	case errors.Is(err, fasthttputil.ErrTimeout):
		return &net.OpError{Op: op, Net: "tcp", Err: os.ErrDeadlineExceeded}
	}
	return err
}

// Dial connects to addr, a host a listener of the network opened (a URL's
// host without a port stands for port 80). It has the shape of
// transport.DialFunc.
func (n *Net) Dial(addr string, _ time.Duration) (net.Conn, error) {
	n.mu.Lock()
	ln := n.hosts[addr]
	if ln == nil {
		ln = n.hosts[addr+":80"]
	}
	n.mu.Unlock()
	if ln == nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("connection refused: no host %s on the test network", addr)}
	}
	c, err := ln.Dial()
	if err != nil {
		return nil, err
	}
	return conn{c}, nil
}

// Serve serves srv (a fasthttp or net/http server's Serve) on a new host
// of the network until the test ends, closing it with stop, and returns
// its root URL (http://hostN.test).
func (n *Net) Serve(t testing.TB, serve func(net.Listener) error, stop func()) string {
	t.Helper()
	ln, addr := n.Listen()
	go serve(ln)
	// Closing the listener as well ends a Serve that had not begun when
	// stop looked for what to close.
	t.Cleanup(func() { stop(); _ = ln.Close() })
	return "http://" + addr
}

// Client is an HTTP client of the network.
func (n *Net) Client() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(_ context.Context, _, addr string) (net.Conn, error) { return n.Dial(addr, time.Second) }}}
}

// ServeHTTP serves h on a new host of the network until the test ends,
// and returns its root URL (http://hostN.test).
func (n *Net) ServeHTTP(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, addr := n.Listen()
	srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	t.Cleanup(func() { _ = srv.Close(); _ = ln.Close() })
	return "http://" + addr
}

// Run runs f in a synctest bubble with a network of its own, which Of
// finds from the bubble's test. Servers f serves stop when it returns; the
// bubble then waits, on its own clock, for their idle connections and
// workers to go.
func Run(t *testing.T, f func(t *testing.T, n *Net)) {
	t.Helper()
	prime.Do(primeFasthttp)
	// A goroutine waiting on what a bubble's clock cannot see (a socket,
	// a system call, a CPU profile's writer) stops its clock for good:
	// once the process has sat idle a while, say so with every
	// goroutine's stack, long before go test's own timeout would.
	done := make(chan struct{})
	defer close(done)
	go watch(t.Name(), done)
	synctest.Test(t, func(t *testing.T) {
		// Registered first, so it runs last: once every server the test
		// started has shut down, a fake minute lets fasthttp's idle
		// connections, cleaners and workers end, as the bubble requires.
		t.Cleanup(func() { time.Sleep(time.Minute) })
		n := &Net{}
		bubbles.Store(t, n)
		t.Cleanup(func() { bubbles.Delete(t) })
		f(t, n)
	})
}

// Idle is how long the process may use next to no CPU while a bubble has
// not ended before Run gives up on the bubble: a bubble working through
// its load (under the race detector, minutes) keeps a core busy; one
// stuck on a system call leaves it idle.
var Idle = time.Minute

// watch panics, with every goroutine's stack, when the process stays all
// but idle for Idle before done closes.
func watch(name string, done <-chan struct{}) {
	const every = 10 * time.Second
	tick := time.NewTicker(every)
	defer tick.Stop()
	cpu, idleFor := processCPU(), time.Duration(0)
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		now := processCPU()
		if now-cpu < every/20 {
			idleFor += every
		} else {
			idleFor = 0
		}
		cpu = now
		if idleFor >= Idle {
			debug.SetTraceback("all")
			panic(fmt.Sprintf("simtest: %s's bubble has not ended and the process sat idle for %s: one of its goroutines waits on something its clock cannot see (a socket, a system call, a CPU profile); see the stacks marked \"synctest bubble\" that are not durable", name, idleFor))
		}
	}
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bubbles maps the test of each running bubble to its network.
var bubbles sync.Map

// Of is the network of t's bubble (Run), or nil when t runs outside one:
// test helpers serve and dial through it when it is there, so a test
// moves into a bubble by wrapping its body and nothing else.
func Of(t testing.TB) *Net {
	n, _ := bubbles.Load(t)
	net, _ := n.(*Net)
	return net
}

var prime sync.Once

// primeFasthttp serves one request outside any bubble: fasthttp starts a
// goroutine that updates its Date header forever the first time a server
// answers, and one started inside a bubble would keep it from ending.
func primeFasthttp() {
	ln := fasthttputil.NewInmemoryListener()
	s := &fasthttp.Server{Handler: func(*fasthttp.RequestCtx) {}}
	go s.Serve(ln)
	c := &fasthttp.HostClient{Addr: "prime", Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	var req fasthttp.Request
	var resp fasthttp.Response
	req.SetRequestURI("http://prime/")
	_ = c.Do(&req, &resp)
	c.CloseIdleConnections()
	_ = s.Shutdown()
}
