package report

import (
	"testing"

	"github.com/kneebench/knee/results"
)

// TestSliceClientLine: the slices whose client was not healthy are named
// by their span (to a tenth of a second: a window's last slice ends
// where the window did), and a run whose every slice was healthy says nothing.
func TestSliceClientLine(t *testing.T) {
	healthy, noisy := &results.SliceClient{Verdict: results.VerdictHealthy}, &results.SliceClient{Verdict: "noisy"}
	ss := []results.Slice{{StartS: 0, EndS: 10, Client: noisy}, {StartS: 10, EndS: 20, Client: healthy}}
	if got, want := sliceClientLine(ss), "\nslices   the client was not healthy in every slice: 0–10 s noisy"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	cut := []results.Slice{{StartS: 10, EndS: 11.658971591, Client: noisy}}
	if got, want := sliceClientLine(cut), "\nslices   the client was not healthy in every slice: 10–11.7 s noisy"; got != want {
		t.Errorf("a window's last slice: got %q, want %q", got, want)
	}
	if got := sliceClientLine(ss[1:]); got != "" {
		t.Errorf("every slice healthy: %q", got)
	}
}
