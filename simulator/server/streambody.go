package server

import (
	"bufio"
	"io"
	"net"
	"reflect"

	"github.com/valyala/fasthttp"
)

// chunkRoom is the free space every sent buffer keeps in front of its
// data, where a chunk's size line goes when the answer frames its own
// chunks: up to six hex digits and CRLF, so chunks under 16 MiB.
const chunkRoom = 8

// maxFramed is the largest chunk that fits chunkRoom's size line.
const maxFramed = 1<<24 - 1

// sendFunc puts f[chunkRoom:] on the wire at once: one HTTP chunk and, on
// a live connection, one write system call. f[:chunkRoom] is scratch
// space the sender may overwrite, as it may the capacity after len(f). It
// reports the client gone by returning an error.
type sendFunc func(f []byte) error

// streamBody is a streamed response body that fasthttp writes by calling
// WriteTo on the connection's own goroutine, so each send of the answer
// becomes one HTTP chunk on the socket at once. fasthttp's
// SetBodyStreamWriter would instead run the answer on a second goroutine
// and copy it through an in-memory pipe: a goroutine switch and a copy per
// token, which profiles put at a sixth of the simulator's CPU.
type streamBody struct {
	write   func(send sendFunc)
	done    func()
	conn    net.Conn
	started bool
	rc      io.ReadCloser

	// What WriteTo's sends share.
	w                io.Writer
	canFrame, direct bool
	n                int64
	err              error
}

var (
	_ fasthttp.BodyWriterTo = (*streamBody)(nil)
	_ io.ReadCloser         = (*streamBody)(nil)
)

// newStreamBody returns a body that streams with write and calls done once
// the answer has run, or when the body is dropped unsent (a HEAD request,
// a connection that failed before the body). write must not call done.
// conn, when not nil, is the connection fasthttp writes the body to.
func newStreamBody(write func(send sendFunc), done func(), conn net.Conn) *streamBody {
	return &streamBody{write: write, done: done, conn: conn}
}

// SupportsBodyWriteTo tells fasthttp to call WriteTo rather than Read.
func (b *streamBody) SupportsBodyWriteTo() bool { return true }

// chunkFramer is the type of the writer fasthttp hands WriteTo for a body
// of unknown length: it writes each call as one chunk and flushes it to
// the connection at once (TestFasthttpChunkFramer keeps this true for the
// fasthttp in go.mod).
const chunkFramer = "*fasthttp.chunkedBodyWriter"

// WriteTo streams the answer into w. When w is fasthttp's chunk framer,
// only the first send goes through it, behind the response headers it
// holds; its buffer is empty after that, so later sends frame their own
// chunk and write it straight to the connection: a token's event then
// costs one copy (into the answer's buffer) and one system call, where
// going through fasthttp adds a copy into its buffer and a framing pass
// per token. Any other w gets every send.
func (b *streamBody) WriteTo(w io.Writer) (int64, error) {
	b.started = true
	defer b.done()
	b.w = w
	b.canFrame = b.conn != nil && reflect.TypeOf(w).String() == chunkFramer
	b.write(b.send)
	return b.n, b.err
}

// send is WriteTo's sendFunc. Its state lives in the body, next to the
// connection, rather than in variables a closure would move to the heap
// one by one.
func (b *streamBody) send(f []byte) error {
	p := f[chunkRoom:]
	var err error
	if b.direct && len(p) <= maxFramed {
		_, err = b.conn.Write(frameChunk(f))
	} else {
		_, err = b.w.Write(p)
		b.direct = b.canFrame
	}
	if err != nil {
		if b.err == nil {
			b.err = err
		}
		return err
	}
	b.n += int64(len(p))
	return nil
}

// frameChunk frames f[chunkRoom:] as one HTTP/1.1 chunk in place: the hex
// size and CRLF in the room before it, CRLF after it. The data must be
// shorter than maxFramed and not empty (an empty chunk ends the body).
func frameChunk(f []byte) []byte {
	const hex = "0123456789abcdef"
	n := len(f) - chunkRoom
	i := chunkRoom - 2
	f[i], f[i+1] = '\r', '\n'
	for {
		i--
		f[i] = hex[n&0xf]
		n >>= 4
		if n == 0 {
			break
		}
	}
	return append(f[i:], '\r', '\n')
}

// Read serves a caller that reads the body instead of asking for WriteTo:
// the answer then runs on its own goroutine behind a pipe, as with
// SetBodyStreamWriter.
func (b *streamBody) Read(p []byte) (int, error) {
	if b.rc == nil {
		b.started = true
		b.rc = fasthttp.NewStreamReader(func(w *bufio.Writer) {
			defer b.done()
			b.write(flushingSend(w))
		})
	}
	return b.rc.Read(p)
}

// flushingSend sends through a buffered writer, flushing each send.
func flushingSend(w *bufio.Writer) sendFunc {
	return func(f []byte) error {
		if _, err := w.Write(f[chunkRoom:]); err != nil {
			return err
		}
		return w.Flush()
	}
}

// Close releases the body. An answer that was never sent runs against a
// dead connection, so it is recorded as aborted like any client that left.
func (b *streamBody) Close() error {
	if !b.started {
		b.started = true
		b.write(func([]byte) error { return io.ErrClosedPipe })
		b.done()
	}
	if b.rc != nil {
		return b.rc.Close()
	}
	return nil
}
