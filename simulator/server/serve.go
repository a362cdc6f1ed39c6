package server

import (
	"context"
	"fmt"
	"net"
	"strconv"
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

// RunFleet serves n independent replicas of o, each its own engines, KV
// caches, queues and metrics, on consecutive ports from port (0: each
// picks a free one) until ctx is cancelled; ready is told each address.
func RunFleet(ctx context.Context, host string, port, n int, o Options, grace time.Duration, ready func(int, net.Addr)) error {
	servers := make([]*Server, 0, n)
	closeAll := func() {
		for _, s := range servers {
			for _, m := range s.models {
				m.engine.Close()
			}
		}
	}
	listeners := make([]net.Listener, 0, n)
	for i := range n {
		ro := o
		ro.Replica = &Replica{Index: i, Count: n}
		s, err := NewServer(ro)
		if err != nil {
			closeAll()
			return err
		}
		servers = append(servers, s)
		p := 0
		if port > 0 {
			p = port + i
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			closeAll()
			return fmt.Errorf("replica %d: %w", i, err)
		}
		listeners = append(listeners, ln)
	}
	errc := make(chan error, n)
	for i, s := range servers {
		go func() { errc <- s.Serve(listeners[i]) }()
		if ready != nil {
			ready(i, listeners[i].Addr())
		}
	}
	var first error
	select {
	case first = <-errc:
	case <-ctx.Done():
	}
	for _, s := range servers {
		if err := s.Shutdown(grace); err != nil && first == nil {
			first = err
		}
	}
	return first
}
