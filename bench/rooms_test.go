package bench

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestHouseKeepsItsDoors fails when a package imports what its room must
// never, directly or not: the doors of the house go one way. The data
// model (results), the self-checks (health) and what to send (workload)
// are pure and see no runner, transport or command. On the client side,
// what one request measured (bench/record) sees only the data model; the
// transport (bench/transport) sees no driver, summariser or health; the
// one load driver (bench/driver) sees no transport and no HTTP library,
// only records, workloads and the data model, so a live run and a
// prediction drive their loads alike; the summariser (bench/summary) is
// pure, records in and results out, with no transport; the bench (the summariser and the live wiring) sees
// neither the commands, the report, the predictor nor the simulator, and
// not its own server view, which is a room beside it that uses its
// transport. The manifests (kube) see only the data model; the
// simulator sees only the presets; the predictor, the one room that sees
// both sides, sees neither the commands, the report, the manifests nor
// the live server view.
func TestHouseKeepsItsDoors(t *testing.T) {
	const mod = "github.com/kneebench/knee/"
	everyRoom := []string{"bench", "cmd", "health", "kube", "predict", "presets", "report", "results", "simulator", "workload"}
	except := func(allowed ...string) []string {
		var out []string
		for _, r := range everyRoom {
			keep := true
			for _, a := range allowed {
				keep = keep && r != a
			}
			if keep {
				out = append(out, mod+r)
			}
		}
		return out
	}
	rules := []struct {
		pkg       string
		forbidden []string
		// allowed are the client side's own rooms the package may use,
		// inside a forbidden room.
		allowed []string
	}{
		{"results", append(except(), "github.com/valyala/fasthttp"), nil},
		{"health", append(except(), "github.com/valyala/fasthttp"), nil},
		{"workload", append(except("workload"), "github.com/valyala/fasthttp"), nil},
		{"presets", except(), nil},
		{"bench/record", except("results"), nil},
		{"bench/transport", except("results", "workload"), []string{mod + "bench/record"}},
		{"bench/driver", append(except("workload", "results"), "github.com/valyala/fasthttp"), []string{mod + "bench/record"}},
		{"bench/summary", append(except("health", "results", "workload"), "github.com/valyala/fasthttp"),
			[]string{mod + "bench/record", mod + "bench/driver"}},
		// The bench's root is what a live level and a predicted one share:
		// no transport, no HTTP client, so the predictor links none.
		{"bench", append(except("bench", "health", "results", "workload"), mod+"bench/serverview", mod+"bench/live", mod+"bench/transport",
			"github.com/valyala/fasthttp"), nil},
		{"bench/live", append(except("bench", "health", "results", "workload"), mod+"bench/serverview"), nil},
		{"bench/serverview", append(except("bench", "health", "results", "workload"), "github.com/prometheus/client_golang"), nil},
		{"report", except("results", "presets"), nil},
		// The manifests know of knee only what names a credential.
		{"kube", except("results"), nil},
		// The simulator serves; it sees no client, predictor or report.
		{"simulator", except("simulator", "presets"), nil},
		// The predictor sees both sides, and nothing that prints or ships.
		// It links no HTTP client or server and no metrics library: what
		// it reads of the simulator is its models and its core.
		{"predict", []string{mod + "cmd", mod + "report", mod + "kube", mod + "bench/serverview", mod + "bench/live", mod + "bench/transport",
			mod + "simulator/server", mod + "simulator/telemetry", "github.com/valyala/fasthttp", "github.com/prometheus/client_golang"}, nil},
	}
	// The leaves import nothing of knee but each other, and every room may
	// use them: the one reader of input files, the table of request kinds,
	// and what both sides of the wire write alike.
	leaves := []string{mod + "results/input", mod + "workload/kind", mod + "workload/wire"}
	for _, leaf := range leaves {
		rules = append(rules, struct {
			pkg       string
			forbidden []string
			allowed   []string
		}{strings.TrimPrefix(leaf, mod), except(), nil})
	}
	// The tests' helpers are no room's: nothing ships with them.
	for i := range rules {
		rules[i].forbidden = append(rules[i].forbidden, mod+"simulator/simtest", mod+"health/quiet")
	}
	for _, r := range rules {
		r.allowed = append(r.allowed, leaves...)
		out, err := exec.Command("go", "list", "-deps", mod+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", r.pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == mod+r.pkg || slices.Contains(r.allowed, dep) {
				continue
			}
			for _, f := range r.forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s imports %s, which its room must never import", r.pkg, dep)
				}
			}
		}
	}
}
