package server

import (
	"context"
	"net"
	"time"
)

// Run serves on addr until ctx ends, then shuts down gracefully within
// grace. ready, when set, is called with the listening address once the
// server accepts connections.
func Run(ctx context.Context, addr string, o Options, grace time.Duration, ready func(net.Addr)) error {
	s, err := NewServer(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		for _, m := range s.models {
			m.engine.Close()
		}
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	return s.Shutdown(grace)
}
