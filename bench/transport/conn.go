package transport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// dialer opens the client's connections. Each one enforces the request's
// read deadline (set per exchange, see trackedConn), is checked for a close
// by the server before it is used again, and can be aborted with all the
// others at once.
type dialer struct {
	// firstByte is the time allowed from the send to the first byte of the
	// response; total bounds a whole exchange. Zero means no limit.
	firstByte, total time.Duration
	// tlsHost, when set, is the server name of an https target: the
	// dialer makes the TLS handshake itself, bounded (see handshake).
	tlsHost string
	// network opens the connections (Target.Network).
	network DialFunc

	mu      sync.Mutex
	conns   map[*trackedConn]struct{}
	aborted atomic.Bool

	opened, stale atomic.Int64
}

var (
	errAborted = errors.New("run interrupted")
	// errStaleConn is what a write on a pooled connection returns when the
	// server closed that connection while it sat idle. Nothing was sent, so
	// the request goes out again on another connection (see RetryIfErr in
	// NewClient).
	errStaleConn = errors.New("the server closed this idle connection")
)

func (d *dialer) dial(addr string) (net.Conn, error) {
	if d.aborted.Load() {
		return nil, errAborted
	}
	nc, err := Target{Network: d.network}.Dial(addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	d.opened.Add(1)
	tc := &trackedConn{Conn: nc, d: d}
	tc.addr = connAddr{Addr: nc.LocalAddr(), tc: tc}
	d.mu.Lock()
	d.conns[tc] = struct{}{}
	d.mu.Unlock()
	if d.aborted.Load() {
		_ = nc.SetDeadline(time.Unix(1, 0))
	}
	if d.tlsHost != "" {
		// Over the tracked connection, so peeking and aborting still
		// work on the socket underneath.
		return handshake(tc, d.tlsHost, d.firstByte)
	}
	return tc, nil
}

// handshake makes a TLS client handshake over nc within timeout (10 s
// when none is set): a server that accepts the connection and never
// finishes the handshake would otherwise hold the request forever, since
// the request's own deadlines start only after it.
func handshake(nc net.Conn, host string, timeout time.Duration) (net.Conn, error) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	tc := tls.Client(nc, &tls.Config{ServerName: host, NextProtos: []string{"http/1.1"}})
	if err := tc.SetDeadline(time.Now().Add(timeout)); err != nil {
		nc.Close()
		return nil, err
	}
	if err := tc.Handshake(); err != nil {
		nc.Close()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("%w: the TLS handshake with %s did not finish within %s", os.ErrDeadlineExceeded, host, timeout)
		}
		return nil, err
	}
	if err := tc.SetDeadline(time.Time{}); err != nil {
		nc.Close()
		return nil, err
	}
	return tc, nil
}

func (d *dialer) abort() {
	d.aborted.Store(true)
	d.mu.Lock()
	defer d.mu.Unlock()
	for c := range d.conns {
		_ = c.Conn.SetDeadline(time.Unix(1, 0))
	}
}

// trackedConn is one connection of the pool. fasthttp uses a connection for
// one exchange at a time, writing the request and then reading the
// response, so the first write after a read starts a new exchange: that is
// where the connection learns that it is being reused.
type trackedConn struct {
	net.Conn
	d    *dialer
	addr connAddr
	once sync.Once

	// Exchange state, touched only by the goroutine that holds the
	// connection.
	writing   bool
	exchanges int
	gotBytes  bool

	// limit is the read deadline of the current exchange until its answer
	// is open (Unix ns; 0 for none); from then on trail moves it with the
	// content. Read applies it (limitNow).
	limit   atomic.Int64
	trail   trail
	applied int64

	// wrote is when the exchange's last write returned (since
	// connEpoch): the request's last byte handed to the socket.
	wrote atomic.Int64
}

// connEpoch is the monotonic origin of trackedConn.wrote.
var connEpoch = time.Now()

// lastWrite is when the current exchange's last write returned.
func (c *trackedConn) lastWrite() time.Time {
	return connEpoch.Add(time.Duration(c.wrote.Load()))
}

// connAddr is the local address a trackedConn reports. fasthttp copies it
// into the response (Response.LocalAddr), which is how a request finds the
// connection it went out on.
type connAddr struct {
	net.Addr
	tc *trackedConn
}

// LocalAddr returns the connection's local address, carrying the
// connection itself.
func (c *trackedConn) LocalAddr() net.Addr { return c.addr }

// connOf returns the connection a response arrived on, if it was one of
// ours.
func connOf(a net.Addr) *trackedConn {
	if ca, ok := a.(connAddr); ok {
		return ca.tc
	}
	return nil
}

// Write starts a new exchange on its first call after a read. A reused
// connection is checked first: if the server closed it while it was idle
// (uvicorn does after 5 s; llama.cpp's server right after each stream),
// nothing is written and errStaleConn says so.
func (c *trackedConn) Write(p []byte) (int, error) {
	if !c.writing {
		c.writing = true
		// The last exchange's deadline may have passed while the
		// connection sat idle; the check below must not mistake that for
		// a close.
		if c.applied != 0 {
			_ = c.Conn.SetReadDeadline(time.Time{})
			c.applied = 0
		}
		if c.exchanges > 0 && peerClosed(c.Conn) {
			c.d.stale.Add(1)
			return 0, errStaleConn
		}
		c.exchanges++
		c.gotBytes = false
		c.trail.on = false
		now := time.Now()
		c.limit.Store(earliest(now, c.d.firstByte, now, c.d.total))
	}
	n, err := c.Conn.Write(p)
	c.wrote.Store(int64(time.Since(connEpoch)))
	return n, err
}

// earliest is the sooner of a+da and b+db as Unix ns, ignoring zero
// durations; 0 when both are zero.
func earliest(a time.Time, da time.Duration, b time.Time, db time.Duration) int64 {
	var out int64
	if da > 0 {
		out = a.Add(da).UnixNano()
	}
	if db > 0 {
		if t := b.Add(db).UnixNano(); out == 0 || t < out {
			out = t
		}
	}
	return out
}

// reused reports whether the current exchange is not the connection's first
// and has not yet received a byte: a close now means the server dropped a
// kept-alive connection, not that it failed the request.
func (c *trackedConn) reusedNoAnswer() bool { return c.exchanges > 1 && !c.gotBytes }

// trail is how an open answer's read deadline follows its content: gap
// after the last content (at, since base; all ns), within end (Unix ns).
// Only the goroutine reading the answer touches it: a token's update is
// one store, and the deadline is worked out when Read needs it.
type trail struct {
	on             bool
	base, gap, end int64
	at             int64
}

// follow makes the exchange's deadline follow the answer's content from
// now on: gap after the last content (0: no gap limit), within end.
func (c *trackedConn) follow(base int64, gap time.Duration, end int64, now time.Duration) {
	c.trail = trail{on: true, base: base, gap: int64(gap), end: end, at: int64(now)}
}

// content notes the answer's latest content, at since the trail's base.
func (c *trackedConn) content(at time.Duration) { c.trail.at = int64(at) }

// limitNow is the exchange's read deadline now (Unix ns; 0 for none).
func (c *trackedConn) limitNow() int64 {
	t := &c.trail
	if !t.on {
		return c.limit.Load()
	}
	if t.gap <= 0 {
		return t.end
	}
	l := t.base + t.at + t.gap
	if t.end != 0 && t.end < l {
		return t.end
	}
	return l
}

// Read applies the exchange's deadline. fasthttp's own read timeout is
// one deadline for the whole response; knee's deadlines move with the
// content of the stream instead. Moving the socket's deadline at every
// token cost a timer update a read (2.5% of the client's CPU at 256
// streams), so a later limit is applied only when the earlier one fires:
// a read that times out before the exchange's limit is read again, up to
// that limit. A sooner limit is applied at once.
func (c *trackedConn) Read(p []byte) (int, error) {
	c.writing = false
	for {
		if c.d.aborted.Load() {
			return 0, errAborted
		}
		c.arm()
		n, err := c.Conn.Read(p)
		if n > 0 {
			c.gotBytes = true
		}
		if n == 0 && c.early(err) {
			continue
		}
		return n, err
	}
}

// arm applies the exchange's limit where none is applied or it is sooner
// than the one applied, and clears the deadline when there is no limit.
func (c *trackedConn) arm() {
	l := c.limitNow()
	if l == c.applied || l != 0 && c.applied != 0 && l > c.applied {
		return
	}
	c.applied = l
	var t time.Time
	if l != 0 {
		t = time.Unix(0, l)
	}
	_ = c.Conn.SetReadDeadline(t)
}

// early says err is a deadline that fired before the exchange's limit
// (one applied before the limit moved later): the read is not late yet.
// The later limit is applied for the next read.
func (c *trackedConn) early(err error) bool {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	l := c.limitNow()
	switch {
	case l == 0 && c.applied == 0:
		return false
	case l == 0:
		c.applied = 0
		_ = c.Conn.SetReadDeadline(time.Time{})
		return true
	case l <= c.applied || time.Now().UnixNano() >= l:
		return false
	}
	c.applied = l
	_ = c.Conn.SetReadDeadline(time.Unix(0, l))
	return true
}

// SetReadDeadline is ignored: the exchange's limit rules reads (fasthttp
// would otherwise clear it before every response).
func (c *trackedConn) SetReadDeadline(time.Time) error { return nil }

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.d.mu.Lock()
		delete(c.d.conns, c)
		c.d.mu.Unlock()
	})
	return c.Conn.Close()
}
