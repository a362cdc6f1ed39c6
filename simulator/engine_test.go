package simulator

import (
	"bufio"
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

// scriptedEngine emits tokens at once with a given pattern of More flags.
type scriptedEngine struct {
	Instant
	more string // one letter per token: M = More, - = not
}

func (e scriptedEngine) Stream(_ context.Context, plan *Plan, _ time.Time, emit func(TokenEvent) error) (StreamInfo, error) {
	for i := range plan.Tokens {
		if err := emit(TokenEvent{Index: i, More: e.more[i] == 'M'}); err != nil {
			return StreamInfo{}, err
		}
	}
	return StreamInfo{}, nil
}

// writeLog records each write reaching the connection side of the stream's
// buffer: one per flush.
type writeLog struct{ writes []string }

func (l *writeLog) Write(p []byte) (int, error) {
	l.writes = append(l.writes, string(p))
	return len(p), nil
}

// TestStreamWritesFollowMore checks that the stream flushes after a token
// unless the engine says what follows is already due, and that grouping
// never changes the bytes sent.
func TestStreamWritesFollowMore(t *testing.T) {
	ts := startSim(t, testModels, "", "")
	m := ts.models["instant"]
	orig := m.engine
	t.Cleanup(func() { m.engine = orig })
	tests := []struct {
		more   string
		writes int
	}{
		{"----", 6}, // role, four tokens, finish + usage + [DONE]
		{"MMMM", 2}, // role, then everything else together
		{"-M-M", 4}, // role, token 0, tokens 1-2, token 3 with the finish
	}
	var first string
	for _, tt := range tests {
		m.engine = scriptedEngine{more: tt.more}
		r := &run{s: ts.Server, m: m, chat: true, model: "instant", id: 7, includeUsage: true,
			arrival: time.Now(), plan: &Plan{PromptTokens: 8, Tokens: []string{"a", " b", "\"c", "\n"}, FinishReason: "length"}}
		var log writeLog
		r.stream(bufio.NewWriterSize(&log, 4096))
		if len(log.writes) != tt.writes {
			t.Errorf("More %s: %d writes, want %d: %q", tt.more, len(log.writes), tt.writes, log.writes)
		}
		all := strings.Join(log.writes, "")
		if first == "" {
			first = all
		} else if all != first {
			t.Errorf("More %s changed the bytes:\n%s\nwant\n%s", tt.more, all, first)
		}
		if got := strings.Count(all, "data: "); got != 8 {
			t.Errorf("More %s: %d events, want 8 (role, 4 tokens, finish, usage, [DONE])", tt.more, got)
		}
	}
}
