package engine

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// moreFlags streams a plan of n tokens and returns each event's More flag.
func moreFlags(t *testing.T, e Engine, n int, arrival time.Time) []bool {
	t.Helper()
	plan := &Plan{PromptTokens: 10, Tokens: make([]string, n)}
	var got []bool
	_, err := e.Stream(context.Background(), plan, arrival, func(ev TokenEvent) error {
		got = append(got, ev.More)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestMoreFlag checks when engines say the following token is already due,
// which lets the server put several tokens in one write.
func TestMoreFlag(t *testing.T) {
	fixed := &FixedRate{Overhead: 20 * time.Millisecond, PrefillPerSec: 10000, DecodePerSec: 100}
	tests := []struct {
		name   string
		engine Engine
		late   time.Duration // how long before "now" the request arrived
		want   string        // one letter per token: M = More, - = not
	}{
		{"instant: the whole answer is due at once", Instant{}, 0, "MMMM"},
		{"fixed_rate on time: only the last token, whose end follows at once", fixed, 0, "---M"},
		{"fixed_rate behind by 45 ms: the first three tokens are overdue", fixed, 45 * time.Millisecond, "MM-M"},
		{"fixed_rate behind by a second: everything is overdue", fixed, time.Second, "MMMM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				flags := moreFlags(t, tt.engine, len(tt.want), time.Now().Add(-tt.late))
				var b strings.Builder
				for _, m := range flags {
					if m {
						b.WriteByte('M')
					} else {
						b.WriteByte('-')
					}
				}
				if b.String() != tt.want {
					t.Errorf("More flags %s, want %s", b.String(), tt.want)
				}
			})
		})
	}
}
