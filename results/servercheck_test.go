package results

import (
	"strings"
	"testing"
)

// TestTTFTGap: a client TTFT well above the server's is said, with what
// it may hold: the server's queue, which some servers' TTFT leaves out
// (llm-d-inference-sim's starts at scheduling: then the E2E, which counts
// it, agrees), or the path to it, which alone is left when the server's
// queue was empty; a gap HTTP explains, or none known, says nothing.
func TestTTFTGap(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	ttft := func(client, server float64) Figure {
		fig := Figure{Name: "TTFT mean", Client: f(client), Server: f(server)}
		fig.SetDelivery()
		return fig
	}
	e2e := func(client, server float64) Figure {
		fig := Figure{Name: "E2E mean", Client: f(client), Server: f(server)}
		fig.SetDelivery()
		return fig
	}
	for _, c := range []struct {
		name    string
		figures []Figure
		want    string
	}{
		{"loopback", []Figure{ttft(37.7, 37.5)}, ""},
		{"ten percent", []Figure{ttft(520, 500)}, ""},
		{"no queue time", []Figure{ttft(108.4, 50), {Name: "queue mean"}}, "it exports no queue time to tell which"},
		{"queue explains it", []Figure{ttft(108.4, 50), {Name: "queue mean", Server: f(272.3)}}, "leaves out the time requests wait in its queue (vLLM's counts from arrival; llm-d-inference-sim's from scheduling) or the path to it is slow; its queue averaged 272.3 ms"},
		{"queue empty", []Figure{ttft(108.4, 50), {Name: "queue mean", Server: f(2.1)}}, "its queue averaged 2.1 ms, so the gap is the path to it"},
		{"E2E agrees", []Figure{ttft(108.4, 50), {Name: "queue mean", Server: f(272.3)}, e2e(457.1, 456.3)}, "its mean E2E is within 0.8 ms of the client's, so the path is quick and the server's TTFT leaves out time its E2E counts"},
		{"E2E gap too", []Figure{ttft(108.4, 50), {Name: "queue mean", Server: f(2.1)}, e2e(520, 460)}, "its queue averaged 2.1 ms, so the gap is the path to it"},
		{"no client", []Figure{{Name: "TTFT mean", Server: f(50)}}, ""},
	} {
		s := &Server{Figures: c.figures}
		s.CheckTTFTGap()
		got := strings.Join(s.Traffic, "\n")
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: said %q, want %q", c.name, got, c.want)
		}
		if c.want != "" && !strings.Contains(got, "58.4 ms above the server's 50.0 ms") {
			t.Errorf("%s: %q does not give the gap", c.name, got)
		}
	}
}
