package transport

import (
	"context"
	"net"
	"time"
)

// DialFunc opens a connection to addr (host:port) within timeout. A
// Target without one dials TCP; a test gives an in-memory network, so
// that a whole run, its server included, can run on a synctest bubble's
// clock.
type DialFunc func(addr string, timeout time.Duration) (net.Conn, error)

type dialKey struct{}

// WithDial returns ctx carrying d, the network every target resolved
// under ctx is reached through.
func WithDial(ctx context.Context, d DialFunc) context.Context {
	return context.WithValue(ctx, dialKey{}, d)
}

// DialFrom is the network ctx carries (WithDial), or nil: TCP.
func DialFrom(ctx context.Context) DialFunc {
	d, _ := ctx.Value(dialKey{}).(DialFunc)
	return d
}

// Dial opens a connection to addr through t's network.
func (t Target) Dial(addr string, timeout time.Duration) (net.Conn, error) {
	if t.Network != nil {
		return t.Network(addr, timeout)
	}
	return (&net.Dialer{Timeout: timeout}).Dial("tcp", addr)
}
