package quiet

import (
	"testing"

	"github.com/kneebench/knee/health"
)

// TestRetry: the first try a verdict lets the test judge is the one kept;
// only when every try was starved is the test skipped, and then with the
// verdicts and their reasons.
func TestLive(t *testing.T) {
	starved := Try{Verdict: health.HostStarved, Reasons: []string{"timers 40 ms late"}}
	cases := []struct {
		name     string
		verdicts []Try
		want     int // the try kept; -1: skipped
	}{
		{"healthy at once", []Try{{Verdict: health.Healthy}}, 0},
		{"noisy is judged", []Try{{Verdict: health.Noisy}}, 0},
		{"virtual is judged", []Try{{Verdict: "virtual"}}, 0},
		{"starved, then healthy", []Try{starved, {Verdict: health.Healthy}}, 1},
		{"starved every time", []Try{starved, starved, starved}, -1},
		{"client limited every time", []Try{{Verdict: health.ClientLimited}, {Verdict: health.ClientLimited}}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls, got := 0, -2
			ran := t.Run("inner", func(t *testing.T) {
				got = Live(t, len(c.verdicts), func(i int) Try { calls++; return c.verdicts[i] })
			})
			switch {
			case c.want >= 0 && (got != c.want || calls != c.want+1 || !ran):
				t.Errorf("kept try %d after %d calls, want try %d", got, calls, c.want)
			case c.want < 0 && (calls != len(c.verdicts) || got != -2):
				t.Errorf("a test starved every time was not skipped after %d tries (got %d)", calls, got)
			}
		})
	}
}
