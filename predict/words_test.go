package predict

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/simulator/sched"
	"github.com/kneebench/knee/workload"
)

// textOnly hides a source's RequestWords: its requests are said through
// their text.
type textOnly struct{ workload.Source }

// TestWordsPredictAsText holds a level whose requests are said as words
// (workload.WordSource: tokenised and hashed without their text, their
// answers said as content.UnreadToken) to the same level said through
// their text: the same figures, field for field, with the prefix cache
// warm from a pool of prefixes, answers of drawn lengths cut by
// max_tokens, and a completion model as well as a chat one; and on an L4
// whose few KV blocks the level overruns, so blocks are evicted and
// requests preempted (and recomputed) while answers' blocks are cached.
func TestWordsPredictAsText(t *testing.T) {
	src := workload.Synthetic{Tokens: 700, MaxTokens: 96, Seed: 5, Prefix: workload.Pool{Tokens: 400, Count: 3},
		Spread: workload.Spread{InputStddev: 200, OutputStddev: 40}}
	for _, c := range []struct {
		preset string
		rate   float64
		chat   bool
		minOK  int64
		kvFull bool
	}{
		{"h100-80gb/llama-3.1-8b", 15, true, 500, false},
		{"h100-80gb/llama-3.1-8b", 15, false, 500, false},
		{"l4/llama-3.1-8b", 12, true, 100, true},
	} {
		load := driver.Load{Rate: c.rate, Burstiness: 1, Duration: time.Minute, Seed: 2}
		target := presetTarget(t, c.preset)
		if !c.chat {
			target.Endpoint = "completions"
		}
		run := func(s workload.Source) string {
			tally := &StepTally{}
			res, err := (&Virtual{Target: target, Tally: tally}).Run(context.Background(), requestsLevel(s, load))
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests.OK < c.minOK {
				t.Fatalf("%s: %d requests succeeded", c.preset, res.Requests.OK)
			}
			if c := res.Cache; c == nil || c.HitRate < 0.2 || c.Expected == nil || *c.Expected < 0.2 {
				t.Fatalf("cache %+v: the pool's prefixes were not hit", c)
			}
			if full, pre := tally.Stopped[sched.StopKVFull], tally.Stopped[sched.StopPreempted]; c.kvFull != (full > 0 && pre > 0) {
				t.Fatalf("%s: requests waited %.1f s on a full KV cache and %.1f s preempted", c.preset, full, pre)
			}
			return figures(t, res)
		}
		if words, text := run(src), run(textOnly{src}); words != text {
			t.Errorf("%s, chat %v: said as words\n%s\nsaid as text\n%s", c.preset, c.chat, words, text)
		}
	}
}

// figures is a run's JSON without what differs between two runs of one
// level (when it ran, how long the host took).
func figures(t *testing.T, r *results.Run) string {
	t.Helper()
	c := *r
	c.StartedAt, c.WindowStartedAt, c.Environment = time.Time{}, time.Time{}, results.Environment{}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
