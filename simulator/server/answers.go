package server

import (
	"fmt"

	"github.com/kneebench/knee/workload/kind"
)

// answer writes one kind's answer as one body: a pooling model's, or a
// generating model's asked not to stream.
type answer interface {
	// body is the whole answer, once its tokens (all in r.text) have
	// run.
	body(r *run, info StreamInfo) []byte
}

// streamAnswer writes a generating kind's answer as a stream of events,
// through the one stream loop (run.stream). Events go into r.buf, which
// keeps chunkRoom free in front for the chunk's size line.
type streamAnswer interface {
	answer
	// open writes what goes out before the first token (a role chunk,
	// response.created): at once, so the headers leave as vLLM sends
	// them.
	open(r *run)
	// token formats token i's event and returns it with chunkRoom free in
	// front; it may reuse the bytes it returned for the token before.
	token(r *run, i int) []byte
	// close writes what ends a whole answer: the finish, the usage, the
	// terminator.
	close(r *run, info StreamInfo)
	// shutdown writes what ends a stream cut by a shutdown's grace, so
	// the client can tell it from a network failure.
	shutdown(r *run)
}

// handler is how the server takes one kind: its decoder and its answer.
type handler struct {
	kind   kind.Kind
	decode func(s *Server, body []byte) (*decoded, error)
	answer answer
}

// handlers are the registered kinds', by name.
var handlers = map[kind.Name]*handler{}

// register serves the kind named n with decode and a. A kind the table
// does not have, one registered twice, or an answer of the wrong shape
// (streamed or not) is a programming error.
func register(n kind.Name, decode func(s *Server, body []byte) (*decoded, error), a answer) {
	k, ok := kind.Of(n)
	_, streams := a.(streamAnswer)
	switch {
	case !ok || handlers[n] != nil:
		panic(fmt.Sprintf("server: handler for %q: no such kind, or registered twice", n))
	case k.Streamed != streams:
		panic(fmt.Sprintf("server: the answer of %q does not stream as the kind table says", n))
	}
	handlers[n] = &handler{kind: k, decode: decode, answer: a}
}

// handlerAt is the handler of the kind served at path, or nil.
func handlerAt(path string) *handler {
	k, ok := kind.ByPath(path)
	if !ok {
		return nil
	}
	return handlers[k.Name]
}
