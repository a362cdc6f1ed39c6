package transport

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kneebench/knee/bench/record"
)

// TestReadWhole: an answer of a stated length is read into one buffer
// of that size (no doubling), one of unknown length grows to it; one
// longer than the limit is refused, stated or found, without reading it
// all; the budget's bytes are taken as the buffer grows and all given back.
func TestReadWhole(t *testing.T) {
	body := strings.Repeat("x", 100_000)
	for _, tc := range []struct {
		name        string
		size, limit int
		wantCap     int // 0: any
		err         error
	}{
		{name: "stated", size: len(body), limit: 1 << 20, wantCap: len(body) + 1},
		{name: "unstated", size: -1, limit: 1 << 20},
		{name: "stated past the limit", size: len(body), limit: 50_000, err: errAnswerTooLong{50_000}},
		{name: "found past the limit", size: -1, limit: 50_000, err: errAnswerTooLong{50_000}},
		{name: "no room", size: len(body), limit: 1 << 20, err: errNoRoom{64 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{}
			c.answers.limit = 1 << 20
			if tc.err == (errNoRoom{64 << 10}) {
				c.answers.limit = 64 << 10
			}
			b, release, err := c.readWhole(strings.NewReader(body), tc.size, tc.limit)
			if !errors.Is(err, tc.err) && (tc.err != nil || err != nil) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if tc.err == nil && (!bytes.Equal(b, []byte(body)) || tc.wantCap > 0 && cap(b) != tc.wantCap) {
				t.Errorf("read %d bytes into %d, want %d into %d", len(b), cap(b), len(body), tc.wantCap)
			}
			if tc.err == nil && c.answers.used.Load() < int64(len(body)) {
				t.Errorf("the budget holds %d bytes for a %d-byte answer", c.answers.used.Load(), len(body))
			}
			release()
			if n := c.answers.used.Load(); n != 0 {
				t.Errorf("%d bytes still held after release", n)
			}
		})
	}
}

// TestAnswerBudgetShared: a second answer that does not fit beside the
// first one held fails as the client's (client_saturated, naming the
// budget), and fits once the first is given back.
func TestAnswerBudgetShared(t *testing.T) {
	c := &Client{}
	c.answers.limit = 150_000
	body := strings.Repeat("y", 100_000)
	_, release1, err := c.readWhole(strings.NewReader(body), len(body), MaxAnswerBytes)
	if err != nil {
		t.Fatal(err)
	}
	_, release2, err := c.readWhole(strings.NewReader(body), len(body), MaxAnswerBytes)
	release2()
	if class := c.wholeClass(err, &record.Record{}); class != record.ClassClientSaturated || !strings.Contains(fmtErr(err), "0 MiB knee holds") {
		t.Errorf("second answer: %v (%s), want client_saturated naming the budget", err, class)
	}
	release1()
	if _, release, err := c.readWhole(io.LimitReader(strings.NewReader(body), 1<<30), len(body), MaxAnswerBytes); err != nil {
		t.Errorf("after the first was given back: %v", err)
	} else {
		release()
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
