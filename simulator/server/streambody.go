package server

import (
	"bufio"
	"io"
	"sync"

	"github.com/valyala/fasthttp"
)

// streamBody is a streamed response body that fasthttp writes by calling
// WriteTo on the connection's own goroutine, so each flush of the answer
// becomes one HTTP chunk on the socket at once. fasthttp's
// SetBodyStreamWriter would instead run the answer on a second goroutine
// and copy it through an in-memory pipe: a goroutine switch and a copy per
// token, which profiles put at a sixth of the simulator's CPU.
type streamBody struct {
	write   func(w *bufio.Writer)
	done    func()
	started bool
	rc      io.ReadCloser
}

var (
	_ fasthttp.BodyWriterTo = (*streamBody)(nil)
	_ io.ReadCloser         = (*streamBody)(nil)
)

// newStreamBody returns a body that streams with write and calls done once
// the answer has run, or when the body is dropped unsent (a HEAD request,
// a connection that failed before the body). write must not call done.
func newStreamBody(write func(w *bufio.Writer), done func()) *streamBody {
	return &streamBody{write: write, done: done}
}

var chunkWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4096) }}

// SupportsBodyWriteTo tells fasthttp to call WriteTo rather than Read.
func (b *streamBody) SupportsBodyWriteTo() bool { return true }

// WriteTo streams the answer into w, which fasthttp frames as one chunk
// per write and flushes to the connection.
func (b *streamBody) WriteTo(w io.Writer) (int64, error) {
	b.started = true
	defer b.done()
	cw := &countWriter{w: w}
	bw := chunkWriters.Get().(*bufio.Writer)
	bw.Reset(cw)
	b.write(bw)
	err := bw.Flush()
	bw.Reset(nil)
	chunkWriters.Put(bw)
	return cw.n, err
}

// Read serves a caller that reads the body instead of asking for WriteTo:
// the answer then runs on its own goroutine behind a pipe, as with
// SetBodyStreamWriter.
func (b *streamBody) Read(p []byte) (int, error) {
	if b.rc == nil {
		b.started = true
		b.rc = fasthttp.NewStreamReader(func(w *bufio.Writer) {
			defer b.done()
			b.write(w)
		})
	}
	return b.rc.Read(p)
}

// Close releases the body. An answer that was never sent runs against a
// dead writer, so it is recorded as aborted like any client that left.
func (b *streamBody) Close() error {
	if !b.started {
		b.started = true
		b.write(bufio.NewWriterSize(deadWriter{}, 16))
		b.done()
	}
	if b.rc != nil {
		return b.rc.Close()
	}
	return nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// deadWriter fails every write, as a closed connection would.
type deadWriter struct{}

func (deadWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }
