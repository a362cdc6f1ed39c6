package bench

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// TestConfigRoundTrip checks that every load a run can have survives its
// record in results.Config and the replay that knee calibrate makes of it.
func TestConfigRoundTrip(t *testing.T) {
	const drain = 42 * time.Second
	cases := []struct {
		name string
		load driver.Load
	}{
		{"closed", driver.Load{Concurrency: 8, Requests: 400, Warmup: 3, Seed: 7}},
		{"closed, default warm-up", driver.Load{Concurrency: 8, Duration: 90 * time.Second, Warmup: -1, Seed: 1}},
		{"open", driver.Load{Rate: 12.5, Burstiness: 0.25, Requests: 1000, Warmup: 0, Seed: 99}},
		{"open, capped, timed", driver.Load{Rate: 3, Burstiness: 1, MaxConcurrency: 16, Duration: 1500 * time.Millisecond, Warmup: -1, Seed: 5}},
		{"open, odd duration", driver.Load{Rate: 0.7, Burstiness: 1000, Duration: 333333333 * time.Nanosecond, Warmup: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c results.Config
			RecordLoad(&c, tc.load)
			got, err := ReplayLoad(c, drain)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.load
			want.Warmup, want.DrainTimeout = tc.load.DefaultWarmup(), drain
			if !reflect.DeepEqual(got, want) {
				t.Errorf("replayed %+v, recorded from %+v", got, want)
			}
		})
	}
}

// TestConfigSyntheticRoundTrip checks that synthetic prompts survive their
// record and replay: size, spread, shared prefix, max_tokens and seed.
func TestConfigSyntheticRoundTrip(t *testing.T) {
	for _, syn := range []workload.Synthetic{
		{Tokens: 512, MaxTokens: 128, Seed: 3},
		{Tokens: 300, MaxTokens: 40, Seed: 9, Spread: workload.Spread{InputStddev: 30, OutputStddev: 5}},
		{Tokens: 100, MaxTokens: 10, Seed: 1, Spread: workload.Spread{RangeRatio: 0.25}, Prefix: workload.Pool{Tokens: 2000, Count: 4}},
	} {
		var c results.Config
		RecordRequests(&c, Workload{Source: syn, MaxTokens: syn.MaxTokens}, driver.Load{Rate: 2, Burstiness: 1, Requests: 10, Seed: syn.Seed})
		syn.Nonce = "n"
		if got := ReplaySynthetic(c, "n"); !reflect.DeepEqual(got, syn) {
			t.Errorf("replayed %+v, recorded %+v", got, syn)
		}
	}
}

// TestConfigTraceRoundTrip checks that a trace's load comes back as one
// waiting for the dataset's schedule.
func TestConfigTraceRoundTrip(t *testing.T) {
	var c results.Config
	RecordLoad(&c, driver.Load{Rate: 4, Burstiness: 1, Trace: []time.Duration{0, time.Second}})
	c.TraceSpeedup = 2
	got, err := ReplayLoad(c, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got.Trace == nil || len(got.Trace) != 0 || got.Rate != 4 {
		t.Errorf("replayed trace load %+v", got)
	}
}

// TestConfigVoiceRoundTrip does the same for the call workload.
func TestConfigVoiceRoundTrip(t *testing.T) {
	v := workload.Voice{SystemPromptTokens: 900, UserTokens: 40, Turns: 6, GapMin: 1500 * time.Millisecond, GapMax: 4 * time.Second,
		OutputTokens: 70, Seed: 11, Nonce: "n1"}
	o := driver.CallLoad{Rate: 0.5, Calls: 30, Duration: 2 * time.Minute, MaxConcurrentCalls: 12, Seed: 11}
	var c results.Config
	RecordVoice(&c, v, o)
	gotV, gotO, err := ReplayVoice(c, "n1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotV, v) {
		t.Errorf("calls' script: replayed %+v, recorded %+v", gotV, v)
	}
	if gotO.Rate != o.Rate || gotO.Calls != o.Calls || gotO.Duration != o.Duration || gotO.MaxConcurrentCalls != o.MaxConcurrentCalls ||
		gotO.Seed != o.Seed || gotO.DrainTimeout != time.Minute {
		t.Errorf("calls' arrivals: replayed %+v, recorded %+v", gotO, o)
	}
}

// TestConfigFieldsRead perturbs each field the mapping owns in a recorded
// configuration and checks that the replay sees the change: a field
// recorded but never read back would fail here. Every field of
// results.Config must be owned here or listed with the code that owns it,
// so a new field cannot go unmapped unnoticed.
func TestConfigFieldsRead(t *testing.T) {
	elsewhere := map[string]string{
		// RecordTarget writes these here (TestRecordTarget); a replay runs
		// on the simulator, so no target is read back.
		"BaseURL": "target", "BuiltinSim": "target", "Model": "target", "Endpoint": "target", "APIKey": "target",
		"Headers": "target", "ExtraBody": "target", "IgnoreEOS": "target", "TimeoutS": "target", "History": "target", "Tools": "target", "ToolChoice": "target", "ToolRounds": "target", "ToolResult": "target",
		"Workload": "workload (predict.Replay)", "Batch": "workload (a pooling endpoint's inputs; not replayed by calibrate)", "Images": "workload (not replayed by calibrate)", "Mix": "workload (a mix; not replayed by calibrate)", "MaxTokens": "workload", "InputTokens": "workload", "PrefixTokens": "workload",
		"PrefixPool": "workload", "Dataset": "workload", "DatasetFormat": "workload", "DatasetSizing": "workload (predict.replayDataset)",
		"InputStddev": "workload", "OutputStddev": "workload", "RangeRatio": "workload", "Conversations": "workload (predict.replayConversations)",
		"Predicted": "predict", "TraceSpeedup": "workload (the trace's schedule)",
	}
	open := []string{"Rate", "Burstiness", "MaxConcurrency", "Requests", "DurationS", "Warmup", "Seed", "RampUpS", "RampUpFrom"}
	closed := []string{"Concurrency", "Requests", "DurationS", "Warmup", "Seed"}
	// RampUpStrategy is read back with the ramp (TestConfigRampRoundTrip).
	owned := map[string]bool{"Mode": true, "Voice": true, "RampUpStrategy": true}
	for _, f := range append(open, closed...) {
		owned[f] = true
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[results.Config]()) {
		if !owned[f.Name] && elsewhere[f.Name] == "" {
			t.Errorf("results.Config.%s is neither mapped in config.go nor listed with its owner here", f.Name)
		}
	}
	check := func(base driver.Load, fields []string) {
		var c results.Config
		RecordLoad(&c, base)
		before, err := ReplayLoad(c, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range fields {
			p := c
			f := reflect.ValueOf(&p).Elem().FieldByName(name)
			switch f.Kind() {
			case reflect.Int:
				f.SetInt(f.Int() + 3)
			case reflect.Uint64:
				f.SetUint(f.Uint() + 3)
			case reflect.Float64:
				f.SetFloat(f.Float() + 3)
			}
			after, err := ReplayLoad(p, 0)
			if err != nil {
				t.Fatalf("%s changed: %v", name, err)
			}
			var again results.Config
			RecordLoad(&again, after)
			if reflect.DeepEqual(before, after) || !reflect.DeepEqual(again, p) {
				t.Errorf("%s: a change to the record was not replayed (recorded %+v, replayed and recorded again %+v)", name, p, again)
			}
		}
	}
	check(driver.Load{Rate: 2, Burstiness: 1, MaxConcurrency: 4, Requests: 10, Duration: time.Second, Warmup: 1, Seed: 1,
		Ramp: workload.Ramp{Duration: time.Second, Exponential: true, From: -1}}, open)
	check(driver.Load{Concurrency: 2, Requests: 10, Duration: time.Second, Warmup: 1, Seed: 1}, closed)
}

// TestReplayUnknownMode checks that a result without a known mode is
// refused with the sentinel.
func TestReplayUnknownMode(t *testing.T) {
	for _, m := range []results.Mode{"", "sideways"} {
		if _, err := ReplayLoad(results.Config{Mode: m, Requests: 1, Concurrency: 1}, 0); !errors.Is(err, ErrNoMode) {
			t.Errorf("mode %q: got %v, want ErrNoMode", m, err)
		}
	}
}

// TestRecordTarget: every field of the target is recorded, every
// credential redacted, and fields of an earlier target do not survive.
func TestRecordTarget(t *testing.T) {
	c := results.Config{APIKey: "old", Headers: map[string]string{"Old": "x"}}
	spec := TargetSpec{APIKey: "sk-secret", Endpoint: "completions", Headers: []string{"X-Api-Key: k", "X-Trace: on"},
		ExtraBody: `{"ignore_eos":true,"auth_token":"t"}`, IgnoreEOS: false, Timeout: 30 * time.Second}
	RecordTarget(&c, spec, "http://u:p@gpu:8000/v1?key=q", "m", true)
	want := results.Config{BaseURL: "http://[redacted]@gpu:8000/v1?key=[redacted]", BuiltinSim: true, Model: "m", Endpoint: "completions",
		APIKey: results.Redacted, Headers: map[string]string{"X-Api-Key": results.Redacted, "X-Trace": "on"},
		ExtraBody: `{"auth_token":"[redacted]","ignore_eos":true}`, TimeoutS: 30}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("recorded %+v\nwant     %+v", c, want)
	}
	RecordTarget(&c, TargetSpec{Endpoint: "chat"}, "http://gpu/v1", "m", false)
	if c.APIKey != "" || c.Headers != nil || c.BuiltinSim {
		t.Errorf("an earlier target's fields survived: %+v", c)
	}
}

// TestConfigRampRoundTrip: a recorded ramp replays with its duration,
// shape and start rate, the strategies' defaults included.
func TestConfigRampRoundTrip(t *testing.T) {
	for _, r := range []workload.Ramp{
		{Duration: 5 * time.Second, From: -1},
		{Duration: 5 * time.Second, From: 0},
		{Duration: 2 * time.Second, From: 1.5},
		{Duration: 3 * time.Second, Exponential: true, From: -1},
		{Duration: 3 * time.Second, Exponential: true, From: 0.5},
	} {
		var c results.Config
		RecordLoad(&c, driver.Load{Rate: 8, Burstiness: 1, Requests: 10, Seed: 1, Ramp: r})
		l, err := ReplayLoad(c, 0)
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		got := l.Ramp
		if got.Duration != r.Duration || got.Strategy() != r.Strategy() || got.StartRate(8) != r.StartRate(8) {
			t.Errorf("%+v recorded as %v s %q from %v, replayed as %+v", r, c.RampUpS, c.RampUpStrategy, c.RampUpFrom, got)
		}
	}
	var c results.Config
	RecordLoad(&c, driver.Load{Rate: 8, Burstiness: 1, Requests: 10, Ramp: workload.Ramp{Duration: time.Second, From: -1}})
	RecordLoad(&c, driver.Load{Concurrency: 2, Requests: 10})
	if c.RampUpS != 0 || c.RampUpStrategy != "" {
		t.Errorf("a closed loop recorded over a ramped one kept its ramp: %+v", c)
	}
}

// TestHeaderFlagChecked: a --header that would break the request (a CR
// LF starting another header, a name with a space, a framing header knee
// writes itself, whose Content-Length once left the server waiting for a
// body until the timeout) is a usage error naming it.
func TestHeaderFlagChecked(t *testing.T) {
	for _, tc := range []struct{ h, want string }{
		{"X-A: b\r\nX-Injected: c", "not a valid header"},
		{"X Bad: 1", "not a valid header"},
		{"content-length: 5", "frames the request"},
		{"Transfer-Encoding: chunked", "frames the request"},
		{"NoColon", "must look like Name:value"},
	} {
		ts := TargetSpec{Headers: []string{tc.h}, Endpoint: "chat", History: "full"}
		if err := ts.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--header %q: %v, want %q", tc.h, err, tc.want)
		}
	}
	ok := TargetSpec{Headers: []string{"X-Tenant: a b", "Host: gpu-1"}, Endpoint: "chat", History: "full"}
	if err := ok.Validate(); err != nil {
		t.Errorf("good headers refused: %v", err)
	}
}

// TestExtraBodyKeysKneeWrites: --extra-body may not set what knee writes
// (the model, the stream, the prompts, the answer's length), in any case:
// "Model" once renamed the model on a server whose JSON ignores case, and
// max_tokens changed the lengths knee reports as asked.
func TestExtraBodyKeysKneeWrites(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"stream": false}`, "knee always streams"},
		{`{"Model": "x"}`, "use --model"},
		{`{"max_tokens": 1}`, "use --max-tokens"},
		{`{"MESSAGES": []}`, "use --prompt, --input-tokens or --dataset"},
	} {
		ts := TargetSpec{ExtraBody: tc.body, Endpoint: "chat", History: "full"}
		if err := ts.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--extra-body %s: %v, want %q", tc.body, err, tc.want)
		}
	}
	ok := TargetSpec{ExtraBody: `{"temperature": 0, "priority": 1}`, Endpoint: "chat", History: "full"}
	if err := ok.Validate(); err != nil {
		t.Errorf("a good extra body refused: %v", err)
	}
}
