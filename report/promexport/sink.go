package promexport

import (
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
)

// The Exporter is a report.Sink: --export prometheus=ADDR.
var _ report.Sink = (*Exporter)(nil)

// Describe implements report.Sink.
func (e *Exporter) Describe() string { return "exporting to Prometheus at " + e.URL() }

// OnProgress implements report.Sink.
func (e *Exporter) OnProgress(m report.Moment) { e.Status(m.Label, m.Load, m.Progress) }

// OnLevel implements report.Sink.
func (e *Exporter) OnLevel(label string, l results.Level) { e.Level(label, l.Load, l.Run, l.Verdict) }

// OnSweep implements report.Sink: every level again, as a later level
// can change an earlier one's verdict (the knees judge them together),
// then the sweep's knee.
func (e *Exporter) OnSweep(label string, s *results.Sweep) {
	for _, l := range s.Levels {
		e.Level(label, l.Load, l.Run, l.Verdict)
	}
	e.Sweep(label, s)
}

// Stop implements report.Sink.
func (e *Exporter) Stop() error { e.Close(); return nil }
