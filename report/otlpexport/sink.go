package otlpexport

import (
	"context"
	"fmt"
	"time"

	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
)

// The Exporter is a report.Sink that takes every request: --export
// otlp=URL.
var _ report.RequestSink = (*Exporter)(nil)

// Describe implements report.Sink.
func (e *Exporter) Describe() string {
	return "exporting over OTLP to " + results.RedactURL(e.endpoint)
}

// OnRequest implements report.RequestSink.
func (e *Exporter) OnRequest(r report.Request) { e.Request(r) }

// Stop implements report.Sink: the last push, within ten seconds.
func (e *Exporter) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Close(ctx); err != nil {
		return fmt.Errorf("--export otlp=%s: %w", results.RedactURL(e.endpoint), err)
	}
	return nil
}
