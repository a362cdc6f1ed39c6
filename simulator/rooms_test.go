package simulator

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRoomsKeepTheirDoors fails when a room imports what it must never:
// content, engine and model never see HTTP, Prometheus or the server;
// telemetry sees no HTTP, content or engine; content sees no other room;
// nothing in the simulator sees the bench.
func TestRoomsKeepTheirDoors(t *testing.T) {
	const mod = "github.com/kneebench/knee/"
	rules := []struct {
		pkg       string
		forbidden []string
		allowed   []string // simulator packages it may import
	}{
		{"simulator/content", []string{"github.com/valyala/fasthttp", "github.com/prometheus/", mod + "bench", mod + "simulator"}, nil},
		{"simulator/engine", []string{"github.com/valyala/fasthttp", "github.com/prometheus/", mod + "bench", mod + "simulator"},
			[]string{mod + "simulator/engine", mod + "simulator/content", mod + "simulator/sched"}},
		{"simulator/sched", []string{"github.com/valyala/fasthttp", "github.com/prometheus/", mod + "bench", mod + "simulator"}, nil},
		{"simulator/telemetry", []string{"github.com/valyala/fasthttp", mod + "bench", mod + "simulator"},
			[]string{mod + "simulator/telemetry", mod + "simulator/sched"}},
		{"simulator/server", []string{mod + "bench", mod + "cmd", mod + "report", mod + "workload", mod + "simulator"},
			[]string{mod + "simulator/server", mod + "simulator/content", mod + "simulator/engine", mod + "simulator/sched", mod + "simulator/telemetry",
				mod + "simulator/model", mod + "workload/kind", mod + "workload/wire"}},
		// The models and what they do speak no HTTP and keep no metrics:
		// the predictor reads them without linking a server.
		{"simulator/model", []string{"github.com/valyala/fasthttp", "github.com/prometheus/", "net/http", mod + "bench", mod + "simulator"},
			[]string{mod + "simulator/model", mod + "simulator/content", mod + "simulator/engine", mod + "simulator/sched", mod + "workload/wire"}},
		{"simulator", []string{mod + "bench", mod + "cmd", mod + "report", mod + "workload"}, []string{mod + "workload/kind", mod + "workload/wire"}},
	}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-deps", mod+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", r.pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == mod+r.pkg || contains(r.allowed, dep) {
				continue
			}
			for _, f := range r.forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) {
					t.Errorf("%s imports %s, which its room must never import", r.pkg, dep)
				}
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestOnlyTheServerSpeaksHTTP: fasthttp is imported by the server room
// and by no other package of the simulator but simtest, the tests'
// in-memory network, which no room imports.
func TestOnlyTheServerSpeaksHTTP(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/kneebench/knee/simulator/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasSuffix(fields[0], "/simulator/server") || strings.HasSuffix(fields[0], "/simulator/simtest") {
			continue
		}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, "github.com/valyala/fasthttp") {
				t.Errorf("%s imports %s: only the server room may", fields[0], imp)
			}
		}
	}
}
