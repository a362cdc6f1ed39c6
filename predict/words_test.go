package predict

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// textOnly hides a source's RequestWords: its requests are said through
// their text.
type textOnly struct{ workload.Source }

// TestWordsPredictAsText holds a level whose requests are said as words
// (workload.WordSource: tokenised and hashed without their text) to the
// same level said through their text: the same figures, field for field,
// with the prefix cache warm from a pool of prefixes, answers of drawn
// lengths cut by max_tokens, and a completion model as well as a chat one.
func TestWordsPredictAsText(t *testing.T) {
	src := workload.Synthetic{Tokens: 700, MaxTokens: 96, Seed: 5, Prefix: workload.Pool{Tokens: 400, Count: 3},
		Spread: workload.Spread{InputStddev: 200, OutputStddev: 40}}
	load := driver.Load{Rate: 15, Burstiness: 1, Duration: time.Minute, Seed: 2}
	for _, chat := range []bool{true, false} {
		target := presetTarget(t, "h100-80gb/llama-3.1-8b")
		target.Chat = chat
		run := func(s workload.Source) string {
			res, err := (&Virtual{Target: target}).Run(context.Background(), requestsLevel(s, load))
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests.OK < 500 {
				t.Fatalf("%d requests succeeded", res.Requests.OK)
			}
			if c := res.Cache; c == nil || c.HitRate < 0.2 || c.Expected == nil || *c.Expected < 0.2 {
				t.Fatalf("cache %+v: the pool's prefixes were not hit", c)
			}
			return figures(t, res)
		}
		if words, text := run(src), run(textOnly{src}); words != text {
			t.Errorf("chat %v: said as words\n%s\nsaid as text\n%s", chat, words, text)
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
