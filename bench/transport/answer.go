package transport

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/kneebench/knee/bench/record"
)

// MaxAnswerBytes bounds one answer read whole (a pooled answer: 256
// inputs of 8,192 floats in JSON are some 40 MB).
const MaxAnswerBytes = 256 << 20

// answerBudget is the bytes of answers read whole that the client holds
// at once, across its requests (Target.AnswerBudget; none when limit is
// 0): past it a request fails as the client's, not the server's, rather
// than the process running out of memory.
type answerBudget struct {
	used  atomic.Int64
	limit int64
}

// take reserves n bytes, reporting whether the budget has them.
func (b *answerBudget) take(n int64) bool {
	if b.limit <= 0 || n <= 0 {
		return true
	}
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *answerBudget) give(n int64) {
	if b.limit > 0 && n > 0 {
		b.used.Add(-n)
	}
}

// errAnswerTooLong and errNoRoom are why readWhole stopped.
type errAnswerTooLong struct{ limit int }

func (e errAnswerTooLong) Error() string {
	return fmt.Sprintf("the answer is longer than %d MiB, the most knee reads of one", e.limit>>20)
}

type errNoRoom struct{ limit int64 }

func (e errNoRoom) Error() string {
	return fmt.Sprintf("the answers read whole in flight would pass the %d MiB knee holds for them on this host: "+
		"lower the load, or run shards", e.limit>>20)
}

// readWhole reads an answer of size bytes (-1 when the server did not say)
// of at most limit, its buffer sized once when the size is known, else
// grown by doubling; every byte of the buffer is taken from the client's
// budget first, and release gives them back.
func (c *Client) readWhole(body io.Reader, size, limit int) (b []byte, release func(), err error) {
	held := int64(0)
	release = func() { c.answers.give(held); held = 0 }
	grow := func(n int) bool {
		if !c.answers.take(int64(n - cap(b))) {
			return false
		}
		held += int64(n - cap(b))
		b = append(make([]byte, 0, n), b...)
		return true
	}
	switch {
	case size > limit:
		return nil, release, errAnswerTooLong{limit}
	case size >= 0:
		if !grow(size + 1) { // one more: a body longer than it said
			return nil, release, c.noRoom()
		}
	default:
		if !grow(min(64<<10, limit+1)) {
			return nil, release, c.noRoom()
		}
	}
	for {
		if len(b) == cap(b) {
			if len(b) > limit {
				return nil, release, errAnswerTooLong{limit}
			}
			if !grow(min(2*cap(b), limit+1)) {
				return nil, release, c.noRoom()
			}
		}
		n, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			if len(b) > limit {
				return nil, release, errAnswerTooLong{limit}
			}
			return b, release, nil
		}
		if err != nil {
			return nil, release, err
		}
	}
}

// noRoom is the error of an answer the client's budget cannot hold.
func (c *Client) noRoom() error { return errNoRoom{c.answers.limit} }

// wholeClass is the class of a failed whole read: the client's when its
// budget had no room, a malformed answer when it was too long, else the
// transport's.
func (c *Client) wholeClass(err error, rec *record.Record) string {
	var long errAnswerTooLong
	var room errNoRoom
	switch {
	case errors.As(err, &room):
		return record.ClassClientSaturated
	case errors.As(err, &long):
		return record.ClassMalformed
	}
	return c.classifyAt(err, false, rec.Sent)
}
