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

// TestFixedRateStopsWithContext checks that a stream asleep before its
// next token wakes when its context ends, whether the end comes during the
// wait or before the wait begins, and sends nothing more.
func TestFixedRateStopsWithContext(t *testing.T) {
	fixed := &FixedRate{Overhead: time.Millisecond, PrefillPerSec: 1e6, DecodePerSec: 1} // a token a second
	for _, cancelAfter := range []int{0, 1, 3} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			if cancelAfter == 0 {
				cancel()
			}
			start := time.Now()
			sent := 0
			_, err := fixed.Stream(ctx, &Plan{PromptTokens: 1, Tokens: make([]string, 10)}, start, func(TokenEvent) error {
				sent++
				if sent == cancelAfter {
					time.AfterFunc(300*time.Millisecond, cancel)
				}
				return nil
			})
			if err != context.Canceled {
				t.Fatalf("cancel after %d tokens: err %v, want context.Canceled", cancelAfter, err)
			}
			if sent != cancelAfter {
				t.Errorf("cancel after %d tokens: %d sent", cancelAfter, sent)
			}
			// Token k is due at TTFT + k s; the cancel lands 300 ms after
			// the last token sent, before the next is due.
			want := time.Duration(0)
			if cancelAfter > 0 {
				due := fixed.TTFT(1) + float64(cancelAfter-1)
				want = time.Duration(due*float64(time.Second)) + 300*time.Millisecond
			}
			if got := time.Since(start); got != want {
				t.Errorf("cancel after %d tokens: returned after %v, want %v", cancelAfter, got, want)
			}
			cancel()
		})
	}
}
