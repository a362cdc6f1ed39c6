package report

import "github.com/kneebench/knee/results"

// The live view is a Sink: --dashboard.
var _ Sink = (*Dashboard)(nil)

// Describe implements Sink.
func (d *Dashboard) Describe() string { return "live view at " + d.URL() }

// OnProgress implements Sink.
func (d *Dashboard) OnProgress(m Moment) {
	d.Status(LiveStatusOf(m.Progress, m.Level, m.Index, m.Levels, m.Window, m.Offered))
}

// OnLevel implements Sink: a run's one level is the run.
func (d *Dashboard) OnLevel(_ string, l results.Level) {
	if l.Run != nil {
		d.Run(l.Run)
	}
}

// OnSweep implements Sink: the sweep's levels are its curve.
func (d *Dashboard) OnSweep(_ string, s *results.Sweep) { d.Sweep(s) }

// Stop implements Sink: the view becomes the report, its viewers get a
// moment to take it, and it stops serving (Page keeps it).
func (d *Dashboard) Stop() error {
	d.Done(DoneGrace)
	d.Close()
	return nil
}
