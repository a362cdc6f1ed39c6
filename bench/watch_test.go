package bench

import (
	"context"
	"slices"
	"testing"

	"github.com/kneebench/knee/results"
)

// hook is a watcher that logs its hooks, in a log several share.
type hook struct {
	name string
	log  *[]string
}

func (h hook) say(what string)       { *h.log = append(*h.log, h.name+"."+what) }
func (h hook) Start(context.Context) { h.say("start") }
func (h hook) End(context.Context)   { h.say("end") }
func (h hook) Fill(*results.Run)     { h.say("fill") }

// startHook has work before the level, finishHook after it.
type startHook struct{ hook }

func (s startHook) BeforeLevel(context.Context) { s.say("before") }

type finishHook struct{ hook }

func (f finishHook) Finish() { f.say("finish") }

// TestWatchersOrder: a level's watchers are called in the order listed,
// their ends and finishes last started first, and the optional hooks only
// on the watchers that have them.
func TestWatchersOrder(t *testing.T) {
	var log []string
	ws := Watchers{startHook{hook{"reset", &log}}, hook{"view", &log}, finishHook{hook{"profiler", &log}}}
	ctx := context.Background()
	ws.BeforeLevel(ctx)
	ws.Start(ctx)
	ws.End(ctx)
	ws.Finish()
	ws.Fill(&results.Run{})
	want := []string{"reset.before",
		"reset.start", "view.start", "profiler.start",
		"profiler.end", "view.end", "reset.end",
		"profiler.finish",
		"reset.fill", "view.fill", "profiler.fill"}
	if !slices.Equal(log, want) {
		t.Errorf("hooks called %q\nwant %q", log, want)
	}
}
