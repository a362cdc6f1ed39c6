package results

import (
	"testing"
	"time"
)

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		24 * time.Hour: "24h", 50 * time.Minute: "50m", 61 * time.Minute: "1h1m", 68 * time.Second: "1m8s",
		15 * time.Second: "15s", 30 * time.Second: "30s", 90 * time.Minute: "1h30m", 0: "0s",
	} {
		if got := ShortDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}
