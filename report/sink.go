package report

import (
	"time"

	"github.com/kneebench/knee/results"
)

// Sink is a place the figures go while the work runs, as k6's outputs
// are: the live view (--dashboard), a Prometheus endpoint and an OTLP
// push (--export). A run and a sweep drive every sink alike, from one
// place: each is opened before anything is measured, told of the level
// in progress and of each level as it ends, and stopped at the end.
// What a sink needs beyond that it asks for with an optional interface
// (RequestSink).
type Sink interface {
	// Describe says where the figures go, for the terminal.
	Describe() string
	// OnProgress is the level running, about twice a second.
	OnProgress(m Moment)
	// OnLevel is a run's one level, as it ended.
	OnLevel(label string, l results.Level)
	// OnSweep is a sweep so far, after each of its levels: all of them,
	// as a later level can change an earlier one's verdict.
	OnSweep(label string, s *results.Sweep)
	// Stop publishes what is left and stops; an error is a warning, the
	// work's figures being kept whatever it says.
	Stop() error
}

// RequestSink is a sink that takes every measured request (an OTLP
// push's gen_ai.client.* histograms). It is called from the goroutine
// that ended the request, so it must be quick and safe for concurrent
// use.
type RequestSink interface {
	Sink
	OnRequest(r Request)
}

// Moment is where the work stands: the work's label, the level running
// (its load, its place among the levels, its window and the rate offered
// to it) and its progress.
type Moment struct {
	Label string
	// Level names the level for a person ("level 2/5 (4)", or "run").
	Level         string
	Index, Levels int
	Load, Offered float64
	Window        time.Duration
	Progress      results.Progress
}

// Request is one measured request as the sinks read it: times from when
// it was sent, its chunks' arrival times, its token counts, the class of
// its failure (empty when it succeeded).
type Request struct {
	Label string
	Load  float64
	// FirstChunk and Duration are from the send; Chunks are the instants
	// the response's chunks came, from the same origin.
	FirstChunk, Duration time.Duration
	Chunks               []time.Duration
	Streamed             bool
	InputTokens          int
	OutputTokens         int
	Failure              string
}

// Sinks fans the work's moments out to every sink.
type Sinks []Sink

// OnProgress tells every sink.
func (ss Sinks) OnProgress(m Moment) {
	for _, s := range ss {
		s.OnProgress(m)
	}
}

// OnLevel tells every sink.
func (ss Sinks) OnLevel(label string, l results.Level) {
	for _, s := range ss {
		s.OnLevel(label, l)
	}
}

// OnSweep tells every sink.
func (ss Sinks) OnSweep(label string, sw *results.Sweep) {
	for _, s := range ss {
		s.OnSweep(label, sw)
	}
}

// Requests are the sinks that take every request, nil when none does.
func (ss Sinks) Requests() func(Request) {
	var rs []RequestSink
	for _, s := range ss {
		if r, ok := s.(RequestSink); ok {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	return func(r Request) {
		for _, s := range rs {
			s.OnRequest(r)
		}
	}
}

// Stop stops every sink, in turn, and returns what each said.
func (ss Sinks) Stop() []error {
	var errs []error
	for _, s := range ss {
		if err := s.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Gauges are an exporter that sets its figures as gauges: the level in
// progress, a level as it ended (with its verdict), a sweep's knees.
type Gauges interface {
	Status(label string, load float64, p results.Progress)
	Level(label string, load float64, r *results.Run, v *results.Verdict)
	Sweep(label string, s *results.Sweep)
}

// GaugeSink is the figure side of a Sink for Gauges, for an exporter to
// embed: each level again on a sweep, as a later level can change an
// earlier one's verdict (the knees judge them together), then its knees.
type GaugeSink struct{ G Gauges }

// OnProgress implements Sink.
func (s GaugeSink) OnProgress(m Moment) { s.G.Status(m.Label, m.Load, m.Progress) }

// OnLevel implements Sink.
func (s GaugeSink) OnLevel(label string, l results.Level) { s.G.Level(label, l.Load, l.Run, l.Verdict) }

// OnSweep implements Sink.
func (s GaugeSink) OnSweep(label string, sw *results.Sweep) {
	for _, l := range sw.Levels {
		s.G.Level(label, l.Load, l.Run, l.Verdict)
	}
	s.G.Sweep(label, sw)
}
