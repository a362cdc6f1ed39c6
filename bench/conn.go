package bench

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// dialer opens connections that enforce the idle timeout on every read and
// can all be aborted at once.
type dialer struct {
	idle    time.Duration
	mu      sync.Mutex
	conns   map[*trackedConn]struct{}
	aborted atomic.Bool
}

var errAborted = errors.New("run interrupted")

func (d *dialer) dial(addr string) (net.Conn, error) {
	if d.aborted.Load() {
		return nil, errAborted
	}
	nc, err := (&net.Dialer{Timeout: 10 * time.Second}).Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: nc, d: d}
	d.mu.Lock()
	d.conns[tc] = struct{}{}
	d.mu.Unlock()
	if d.aborted.Load() {
		_ = nc.SetDeadline(time.Unix(1, 0))
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

type trackedConn struct {
	net.Conn
	d    *dialer
	once sync.Once
}

// Read arms the idle deadline before every read: fasthttp's own read
// timeout is one deadline for the whole response and would cut long
// streams, so the time allowed between chunks is enforced here.
func (c *trackedConn) Read(p []byte) (int, error) {
	if c.d.aborted.Load() {
		return 0, errAborted
	}
	if c.d.idle > 0 {
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.d.idle))
	}
	return c.Conn.Read(p)
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.d.mu.Lock()
		delete(c.d.conns, c)
		c.d.mu.Unlock()
	})
	return c.Conn.Close()
}
