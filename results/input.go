package results

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/kneebench/knee/results/input"
)

// MaxResultBytes bounds a result file read: a 64-shard sweep of twenty
// levels with every histogram is a few megabytes, and decoding one costs
// about six times its size.
const MaxResultBytes = 64 << 20

// MaxRecordsBytes bounds a --records file read back: a million requests'
// lines are about 600 MB.
const MaxRecordsBytes = 2 << 30

// ErrInterrupted is returned when a signal ended the wait for an input
// (input.ErrInterrupted).
var ErrInterrupted = input.ErrInterrupted

// ReadInput reads a whole result file of at most limit bytes (see
// input.Read). A file whose first character is no JSON object's is
// refused at once, before the rest of it is read (/dev/zero, a binary).
func ReadInput(ctx context.Context, path string, limit int64) ([]byte, error) {
	f, err := input.Open(ctx, path, limit, "a file knee wrote")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		c, err := r.ReadByte()
		if err != nil {
			if err == io.EOF {
				return nil, fmt.Errorf("%s is empty: not a file knee wrote", path)
			}
			return nil, err
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if c != '{' {
			return nil, fmt.Errorf("%s does not begin as a JSON object (byte %#02x): not a file knee wrote", path, c)
		}
		_ = r.UnreadByte()
		return io.ReadAll(r)
	}
}
