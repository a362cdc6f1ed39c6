package promexport

import "github.com/kneebench/knee/report"

// The Exporter is a report.Sink: --export prometheus=ADDR.
var _ report.Sink = (*Exporter)(nil)

// Describe implements report.Sink.
func (e *Exporter) Describe() string { return "exporting to Prometheus at " + e.URL() }

// Stop implements report.Sink.
func (e *Exporter) Stop() error { e.Close(); return nil }
