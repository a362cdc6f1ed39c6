package quiet

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// liveTests are the tests that reach knee's live path — a real socket, a
// process, the wall clock's sleep — outside a synctest bubble, each held
// to Live (or Wire). A new one is listed here on purpose: rules are tested
// in a bubble (simulator/simtest) or on the virtual clock.
var liveTests = []string{
	// bench
	"bench/live TestCacheResetFindsTheEngine", "bench/live TestCacheResetGivesUp",
	"bench/live TestCommentsDoNotResetTheTimeout", "bench/live TestConnectionCloseAndHTTP10",
	"bench/live TestDrainTimeoutCutsStragglers", "bench/live TestFaultsAreClassified",
	"bench/live TestFreshConnectionFailureIsNotResent", "bench/live TestHooksAroundTheWindow",
	"bench/live TestHostFullStopsTheLevel", "bench/live TestIdleConnectionsAreReused",
	"bench/live TestIdleLimitFollowsTheContent",
	"bench/live TestLlamaCppTimingsInTheResult", "bench/live TestMultiTokenChunks", "bench TestProbeRetries",
	"bench/live TestRequestTimeoutBoundsADrip", "bench/live TestResendWhenReusedConnectionClosesUnanswered",
	"bench/live TestServerClosesAfterEveryStream", "bench/live TestServerClosesIdleConnections",
	"bench/live TestTimingMatchesServerSchedule", "bench/live TestValidateAgainstLlamaCpp",
	// bench/gpumetrics
	"bench/gpumetrics TestAMDExporter", "bench/gpumetrics TestIntegratedPowerAgreesWithTheCounter",
	"bench/gpumetrics TestJoulesPerTokenFromTheCounter", "bench/gpumetrics TestNotAnExporter",
	// bench/serverview
	"bench/serverview TestBucketMidpointIsNotADelivery",
	"bench/serverview TestCounterResetBetweenScrapes",
	"bench/serverview TestLatestGaugesFollowTheServer", "bench/serverview TestLlamaCppView",
	"bench/serverview TestMetricsWithStatus500AreUsed", "bench/serverview TestMissingMetricsAreNamed",
	"bench/serverview TestNoServerMetrics", "bench/serverview TestPoolsOfAnEngineTimingSomePhases",
	"bench/serverview TestSampleKeepsTheServersWords",
	"bench/serverview TestSGLangPrometheusView",
	"bench/serverview TestSlicesCarryServerGauges",
	"bench/serverview TestTrafficWarningsFromPrometheus", "bench/serverview TestVLLMPrometheusView",
	// bench/transport
	"bench/transport TestEmbeddingsReadRight", "bench/transport TestGenerateProtocol",
	"bench/transport TestImplausiblePromptTokens", "bench/transport TestImplausibleUsageIsFlagged",
	"bench/transport TestLlamaCppResponsesStream", "bench/transport TestMessagesStreamRead", "bench/transport TestOddButLegalServers",
	"bench/transport TestReasoningReadRight", "bench/transport TestRedirectsAreNamed",
	"bench/transport TestRerankReadRight", "bench/transport TestResponsesBody",
	"bench/transport TestResponsesNotStreamed", "bench/transport TestResponsesStreamRead",
	"bench/transport TestStreamsThatEndWithoutDone", "bench/transport TestThinkTagsInPieces",
	"bench/transport TestToolCallsCounted",
	// cmd
	"cmd TestDashboardFollowsASweep", "cmd TestDefaultTarget", "cmd TestDescriptorOutputs",
	"cmd TestFIFOWaitsEndAtASignal", "cmd TestHangUpStopsARun", "cmd TestImagesByURL", "cmd TestInterruptedSweepKeepsLevels",
	"cmd TestRecordsWriteErrorExitsThree", "cmd TestRunExportsOTLP", "cmd TestRunGPUMetrics",
	"cmd TestRunProfile", "cmd TestShardedSweepMerges", "cmd TestShardsMergeToOneProcess",
	"cmd TestSweepExportsWhileItRuns", "cmd TestTLSBlackHole", "cmd TestTwoSignalsStillWrite",
	"cmd TestUploadTime",
	// report
	"report TestDashboardInChromium", "report TestLiveViewDrawsProgressOverTime",
	"report TestPagesInChromium",
	// report/otlpexport
	"report/otlpexport TestPushes",
	// simulator
	"simulator TestCleanLeftovers",
	// simulator/server
	"simulator/server TestAnswersOnTheWire", "simulator/server TestBodiesInFlightAreBounded",
	"simulator/server TestErrorPathsReleaseGauges", "simulator/server TestErrors",
	"simulator/server TestFasthttpChunkFramer", "simulator/server TestFleetConsecutivePorts",
	"simulator/server TestFleetReplicasAreIndependent", "simulator/server TestGarbageOnTheWire",
	"simulator/server TestShutdownDeadline", "simulator/server TestShutdownDrains",
	"simulator/server TestShutdownEndsStreamsWithAnError",
	"simulator/server TestTrickledHeadersGet408", "simulator/server TestWireBytesGolden",
}

// liveCalls start something of the live path.
var liveCalls = map[string]bool{
	"httptest.NewServer": true, "httptest.NewUnstartedServer": true, "httptest.NewTLSServer": true,
	"net.Listen": true, "net.ListenTCP": true, "tls.Listen": true, "net.Dial": true,
	"fakeserver.Start": true, "fakeserver.StartRaw": true, "fakeserver.ClosedPortURL": true,
	"time.Sleep": true, "exec.Command": true, "exec.CommandContext": true,
	"simulator.Run": true, "simulator.RunFleet": true, "simulator.StartChild": true,
}

// bubbleCalls run their function arguments in a synctest bubble.
var bubbleCalls = map[string]bool{"synctest.Test": true, "simtest.Run": true, "inBubble": true}

// heldCalls are the helper's doors.
var heldCalls = map[string]bool{"quiet.Live": true, "quiet.Wire": true, "Live": true, "Wire": true}

// TestEveryLiveTestIsHeld reads every test file of the module: a test
// that starts a server or a process, or sleeps, outside a synctest bubble
// (directly or through a helper of its package) is listed in liveTests
// and goes through Live; no test is listed that does not.
func TestEveryLiveTestIsHeld(t *testing.T) {
	found := map[string]bool{}
	unheld := []string{}
	for dir, files := range testFiles(t, "../..") {
		calls := callGraph(files)
		for name := range calls {
			if !strings.HasPrefix(name, "Test") || name == "TestMain" {
				continue
			}
			if reaches(calls, name, liveCalls) {
				id := dir + " " + name
				found[id] = true
				if !reaches(calls, name, heldCalls) {
					unheld = append(unheld, id)
				}
			}
		}
	}
	var missing, extra []string
	for id := range found {
		if !slices.Contains(liveTests, id) {
			missing = append(missing, id)
		}
	}
	for _, id := range liveTests {
		if !found[id] {
			extra = append(extra, id)
		}
	}
	slices.Sort(missing)
	slices.Sort(unheld)
	for _, id := range missing {
		t.Errorf("%s reaches the live path outside a bubble and is not in liveTests: move it into a bubble (simtest.Run) or list it", id)
	}
	for _, id := range extra {
		t.Errorf("%s is in liveTests but no longer reaches the live path: take it out", id)
	}
	for _, id := range unheld {
		t.Errorf("%s reaches the live path without going through quiet.Live or quiet.Wire", id)
	}
}

// testFiles parses every test file under root, by folder.
func testFiles(t *testing.T, root string) map[string][]*ast.File {
	t.Helper()
	out := map[string][]*ast.File{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		out[filepath.ToSlash(rel)] = append(out[filepath.ToSlash(rel)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// callGraph is what each top-level function of a package's test files
// calls, outside the function arguments of a bubble (which run in it).
func callGraph(files []*ast.File) map[string][]string {
	g := map[string][]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || fd.Recv != nil {
				continue
			}
			var calls []string
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				name := callName(c)
				if (name == "exec.Command" || name == "exec.CommandContext") && goTool(c) {
					name = "go tool"
				}
				calls = append(calls, name)
				return !bubbleCalls[name]
			})
			g[fd.Name.Name] = calls
		}
	}
	return g
}

// callName is pkg.Func or Func for a call of a package's function or of
// one of the file's own.
func callName(c *ast.CallExpr) string {
	switch fn := c.Fun.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		if id, ok := fn.X.(*ast.Ident); ok {
			return id.Name + "." + fn.Sel.Name
		}
	}
	return ""
}

// goTool is exec.Command("go", …): the go command asked about the module,
// no process of knee's.
func goTool(c *ast.CallExpr) bool {
	i := 0
	if callName(c) == "exec.CommandContext" {
		i = 1
	}
	if len(c.Args) <= i {
		return false
	}
	lit, ok := c.Args[i].(*ast.BasicLit)
	if !ok {
		return false
	}
	s, _ := strconv.Unquote(lit.Value)
	return s == "go"
}

// reaches reports whether fn calls one of marks, itself or through the
// package's own functions.
func reaches(g map[string][]string, fn string, marks map[string]bool) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(f string) bool {
		if seen[f] {
			return false
		}
		seen[f] = true
		for _, c := range g[f] {
			if marks[c] {
				return true
			}
			if _, own := g[c]; own && walk(c) {
				return true
			}
		}
		return false
	}
	return walk(fn)
}

// TestEveryFuzzTargetRunsInCI: each fuzz target of the module is run,
// briefly, by .ci/run.
func TestEveryFuzzTargetRunsInCI(t *testing.T) {
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for dir, files := range testFiles(t, "../..") {
		for _, f := range files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || !strings.HasPrefix(fd.Name.Name, "Fuzz") {
					continue
				}
				if want := "fuzz ./" + dir + " " + fd.Name.Name + " "; !strings.Contains(string(ci), want) {
					t.Errorf(".ci/run does not run %s (want a line %q)", fd.Name.Name, want+"EXECS")
				}
			}
		}
	}
}
