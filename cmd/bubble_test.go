package cmd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kneebench/knee/simulator"
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

// simServer serves a simulator with o until the test ends, on t's bubble's
// network (which t must run in), and returns it with its API root.
func simServer(t *testing.T, o simulator.Options) (*simulator.Server, string) {
	t.Helper()
	s, err := simulator.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	root := netOf(t).Serve(t, s.Serve, func() { _ = s.Shutdown(time.Second) })
	return s, root + "/v1"
}

// simIn serves the simulator with a models and a responses file on t's
// bubble's network, options set by opt, and returns its API root.
func simIn(t *testing.T, models, responses string, opt func(*simulator.Options)) string {
	t.Helper()
	mf, err := simulator.LoadModels(context.Background(), models)
	if err != nil {
		t.Fatal(err)
	}
	r, err := simulator.LoadResponses(context.Background(), responses)
	if err != nil {
		t.Fatal(err)
	}
	o := simulator.Options{Models: mf, Responder: r}
	opt(&o)
	_, url := simServer(t, o)
	return url
}

// simOfModels writes yml as a models file in dir (name.yml), serves it
// with knee sim until the test ends, and returns its base URL and path.
func simOfModels(t *testing.T, dir, name, yml string) (string, string) {
	t.Helper()
	path := filepath.Join(dir, name+".yml")
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return startSim(t, path, ""), path
}
