package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/transport"
	"github.com/kneebench/knee/workload/kind"
)

// spec is a request spec as the flags' defaults give it.
func spec() *Spec {
	return &Spec{Workload: "requests", Burstiness: 1, Warmup: -1, Seed: 1, Prompt: "hi", MaxTokens: 16, PrefixPool: 1,
		Data:  DatasetSpec{Format: "auto", MinTokens: -1, MaxPrompt: -1, MaxContext: -1, BlockTokens: 512, Speedup: 1},
		Voice: VoiceSpec{SystemTokens: 1000, UserTokens: 40, Turns: 4, Gap: "5s,7s", OutputTokens: 100}}
}

// given says the named flags were given.
func given(names ...string) func(string) bool {
	return func(f string) bool { return slices.Contains(names, f) }
}

// TestEmptyTextPromptsRefused: a dataset entry with no text (a system
// prompt and an empty user turn) is refused before anything is sent on
// every endpoint that sends the prompt as text — completions and SGLang's
// /generate alike — and taken on chat, whose template still makes a
// prompt of it.
func TestEmptyTextPromptsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.jsonl")
	body := `{"messages":[{"role":"user","content":"hello there"}]}` + "\n" + `{"messages":[{"role":"user","content":"  "}]}` + "\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, e := range transport.Endpoints {
		sp := spec()
		sp.Data.Path, sp.Endpoint = path, e
		_, err := sp.Series(context.Background(), "n")
		if refused := errors.Is(err, ErrEmptyPrompt); refused != (e.Kind().Input == kind.Text) {
			t.Errorf("--endpoint %s: %v; want refused %v", e, err, e.Kind().Input == kind.Text)
		}
		if err != nil && !strings.Contains(err.Error(), "line 2") {
			t.Errorf("--endpoint %s: %q does not name the line", e, err)
		}
	}
}

// TestSpecDefaultsAndRefusals: the spec fills what the flags leave to
// defaults and refuses, naming the flag, what cannot run.
func TestSpecDefaultsAndRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want string // "" for no error
		then func(*testing.T, *Spec, *Prepared)
	}{
		{"a closed loop of one, 100 requests", func(*Spec) {}, "", func(t *testing.T, sp *Spec, p *Prepared) {
			if p.Load.Concurrency != 1 || p.Load.Requests != 100 || p.Calls {
				t.Errorf("load %+v", p.Load)
			}
		}},
		{"20 calls of the voice workload", func(sp *Spec) { sp.Workload, sp.Rate = "voice", 1 }, "", func(t *testing.T, sp *Spec, p *Prepared) {
			if !p.Calls || sp.Voice.Calls != 20 || p.Series.Workload.Voice == nil {
				t.Errorf("calls %v, %d calls", p.Calls, sp.Voice.Calls)
			}
		}},
		{"a zero given", func(sp *Spec) { sp.Given = given("rate") }, "--rate 0 measures nothing", nil},
		{"calls closed loop", func(sp *Spec) { sp.Workload, sp.Concurrency = "voice", 4 }, "the voice workload is open loop", nil},
		{"prefix without input", func(sp *Spec) { sp.PrefixTokens = 100 }, "--prefix-tokens shares a prefix", nil},
		{"both spreads", func(sp *Spec) { sp.InputTokens, sp.RangeRatio, sp.InputStddev = 100, 0.5, 3 }, "not both", nil},
		{"bursty beyond drawing", func(sp *Spec) { sp.Rate, sp.Burstiness = 1, 1e-9 }, "--burstiness must be between", nil},
		{"an unknown workload", func(sp *Spec) { sp.Workload = "chat" }, "--workload must be", nil},
		{"a bad gap", func(sp *Spec) { sp.Workload, sp.Rate, sp.Voice.Gap = "voice", 1, "7s,5s" }, "--gap", nil},
		{"no max tokens", func(sp *Spec) { sp.MaxTokens = 0 }, "--max-tokens must be at least 1", nil},
		{"a rate of one a millennium", func(sp *Spec) { sp.Rate = 1e-12 }, "--rate 1e-12 is outside 0.001 to 1000000", nil},
		{"a hundred million streams", func(sp *Spec) { sp.Concurrency = 100_000_000 }, "--concurrency 100000000 is outside 0 to 100000", nil},
		{"a window of a year", func(sp *Spec) { sp.Duration = 8760 * time.Hour }, "--duration 8760h0m0s is past", nil},
		{"a spread past any prompt", func(sp *Spec) { sp.InputTokens, sp.InputStddev = 10, 1e300 }, "--input-tokens-stddev and --max-tokens-stddev must be at most", nil},
		{"a warm-up of a hundred million", func(sp *Spec) { sp.Warmup = 100_000_000 }, "--warmup 100000000 is outside", nil},
		{"a tokenizer that is not there", func(sp *Spec) { sp.InputTokens, sp.Data.Tokenizer = 64, "/nonexistent/tokenizer.json" }, "--tokenizer: /nonexistent", nil},
		{"a tokenizer for a fixed prompt", func(sp *Spec) { sp.Data.Tokenizer = "../workload/testdata/tokenizer.json" }, "--tokenizer sizes --input-tokens prompts", nil},
		{"a tokenizer for voice calls", func(sp *Spec) {
			sp.Workload, sp.Rate, sp.Data.Tokenizer = "voice", 1, "../workload/testdata/tokenizer.json"
		}, "--tokenizer sizes", nil},
		{"a tokenizer for synthetic prompts", func(sp *Spec) { sp.InputTokens, sp.Data.Tokenizer = 64, "../workload/testdata/tokenizer.json" }, "", func(t *testing.T, sp *Spec, p *Prepared) {
			if p.Series.Workload.Tokenizer == nil {
				t.Error("--tokenizer with --input-tokens was not loaded")
			}
		}},
	} {
		sp := spec()
		tc.edit(sp)
		p, err := sp.Series(context.Background(), "n")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		case tc.then != nil && err == nil:
			tc.then(t, sp, p)
		}
	}
}

// TestSweepWindows: a sweep level's window is the step, a call level's
// the call step unless the step was given, and a count of requests or
// calls replaces it.
func TestSweepWindows(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(*Spec)
		window time.Duration
	}{
		{"requests", func(*Spec) {}, 15 * time.Second},
		{"calls", func(sp *Spec) { sp.Workload = "voice" }, time.Minute},
		{"calls, step given", func(sp *Spec) { sp.Workload, sp.Given = "voice", given("duration") }, 15 * time.Second},
		{"counted requests", func(sp *Spec) { sp.Requests = 50 }, 0},
		{"counted calls", func(sp *Spec) { sp.Workload, sp.Voice.Calls = "voice", 8 }, 0},
	} {
		sp := spec()
		tc.edit(sp)
		w := SweepSpec{Rates: "1,2", Step: 15 * time.Second, CallStep: time.Minute}
		axis, loads, err := w.Levels(sp)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.Prepare(context.Background(), sp, axis, loads, "n"); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if sp.Duration != tc.window {
			t.Errorf("%s: window %s, want %s", tc.name, sp.Duration, tc.window)
		}
	}
	for _, bad := range []SweepSpec{{Rates: "2,1"}, {Rates: "0"}, {Concurrency: "1.5"}, {Rates: "x"}} {
		if _, _, err := bad.Levels(spec()); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestMultiTurnSendsEveryTurn: an AIPerf multi_turn file replays its
// sessions as conversations, every turn, open loop (--rate) or closed
// (--concurrency: each slot a session, as AIPerf and GuideLLM run one);
// --workload requests, which would send each session's first turn alone
// (10 requests of 10 sessions' opening turns, through a proxy, before),
// is refused naming the flag that replays them, and a cap on calls in
// progress beside --concurrency as meaningless.
func TestMultiTurnSendsEveryTurn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mt.jsonl")
	body := `{"session_id":"a","turns":[{"text":"hello there"},{"text":"and then?"}]}` + "\n" +
		`{"session_id":"b","turns":[{"text":"good day"},{"text":"go on"},{"text":"why?"}]}` + "\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"by default", func(sp *Spec) { sp.Rate = 1 }, ""},
		{"no load given", func(*Spec) {}, ""},
		{"closed loop", func(sp *Spec) { sp.Concurrency = 4 }, ""},
		{"closed loop with a cap", func(sp *Spec) { sp.Concurrency, sp.Voice.MaxCalls = 4, 2 }, "--concurrency already holds"},
		{"as requests", func(sp *Spec) { sp.Rate, sp.Given = 1, given("workload") }, "--workload conversations"},
	} {
		sp := spec()
		sp.Data.Path = path
		tc.edit(sp)
		p, err := sp.Series(context.Background(), "n")
		switch {
		case tc.want == "" && (err != nil || !p.Calls || !p.Conversations):
			t.Errorf("%s: %v (calls %v)", tc.name, err, p != nil && p.Calls)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// TestCheckHostRefusesWhatMemoryCannotHold: streams or a cap past what
// the host holds in flight are refused naming the flag; within, pass.
func TestCheckHostRefusesWhatMemoryCannotHold(t *testing.T) {
	for _, c := range []struct {
		sp   Spec
		want string
	}{
		{Spec{Concurrency: 1000}, ""},
		{Spec{Concurrency: 1001}, "--concurrency 1001: this host holds about 1000 requests in flight"},
		{Spec{Rate: 10, MaxConcurrency: 5000}, "lower --max-concurrency"},
	} {
		err := c.sp.CheckHost(1000)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.sp, err, c.want)
		}
	}
}
