package cmd

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kneebench/knee/simulator/simtest"
)

// inBubble runs f in a synctest bubble (simtest.Run). startSim* and
// serveHTTP serve on its in-memory network and execute* dial through it,
// so a test moves into a bubble by wrapping its body and nothing else: its
// loads then take the CPU they cost and no wall time, and their timing is
// exact (client, server and simulated views agree to the microsecond),
// whatever else the host is doing.
func inBubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	simtest.Run(t, func(t *testing.T, _ *simtest.Net) { f(t) })
}

// netOf is the in-memory network of t's bubble, or nil outside one.
func netOf(t testing.TB) *simtest.Net { return simtest.Of(t) }

// serveHTTP serves h until the test ends, on its bubble's network when it
// runs in one (else on 127.0.0.1), and returns the root URL.
func serveHTTP(t *testing.T, h http.Handler) string {
	t.Helper()
	if n := netOf(t); n != nil {
		return n.ServeHTTP(t, h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
