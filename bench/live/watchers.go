package live

import (
	"context"
	"fmt"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/results"
)

// Watcher is a watcher of one level that resets the server's prefix cache
// before its first request and says in the level's result that it did,
// or why not (a warning: the level may have started warm).
func (r *CacheReset) Watcher() bench.Watcher { return &resetWatcher{reset: r} }

type resetWatcher struct {
	reset         *CacheReset
	note, warning string
}

var _ bench.LevelStarter = (*resetWatcher)(nil)

// BeforeLevel implements bench.LevelStarter.
func (w *resetWatcher) BeforeLevel(ctx context.Context) {
	how, err := w.reset.Reset(ctx)
	if err != nil {
		w.warning = fmt.Sprintf("the server's prefix cache was not reset before this level, which may have started warm: %v", err)
		return
	}
	w.note = fmt.Sprintf("the server's prefix cache was reset before this level (%s)", how)
}

func (w *resetWatcher) Start(context.Context) {}
func (w *resetWatcher) End(context.Context)   {}

// Fill implements bench.Watcher.
func (w *resetWatcher) Fill(res *results.Run) {
	res.Notes = appendSome(res.Notes, w.note)
	res.Warnings = appendSome(res.Warnings, w.warning)
}

// Watcher is a watcher of one level that runs the server's profiler over
// its measured window only: started as the window starts (after the
// server view's reset, when it is listed after the view), stopped once
// the window drained (before the view is read), and stopped all the same
// when the level is cut short before its window's end.
func (p *Profiler) Watcher() bench.Watcher { return &profileWatcher{p: p} }

type profileWatcher struct {
	p                *Profiler
	started, stopped bool
	err              error
}

var _ bench.Finisher = (*profileWatcher)(nil)

// Start implements bench.Watcher.
func (w *profileWatcher) Start(ctx context.Context) {
	w.err = w.p.Start(ctx)
	w.started = w.err == nil
}

// End implements bench.Watcher.
func (w *profileWatcher) End(ctx context.Context) {
	if w.started {
		w.err = w.p.Stop(ctx)
		w.stopped = w.err == nil
	}
}

// Finish implements bench.Finisher: the server must not profile on.
func (w *profileWatcher) Finish() {
	if !w.started || w.stopped {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w.End(ctx)
}

// Fill implements bench.Watcher: whether the profiler covered the window.
func (w *profileWatcher) Fill(res *results.Run) {
	switch {
	case w.err != nil:
		res.Warnings = append(res.Warnings, fmt.Sprintf("the server's profiler did not cover this level's window: %v", w.err))
	case w.stopped:
		res.Notes = append(res.Notes, "the server's profiler ran over this level's measured window only (POST /start_profile, then /stop_profile once it drained)")
	}
}
