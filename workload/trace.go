package workload

import (
	"hash/fnv"
	"strings"
	"time"
)

// DefaultTraceBlockTokens is the size of the prompt block a trace's hash
// id stands for, as Mooncake's traces count them.
const DefaultTraceBlockTokens = 512

// TraceBlocks writes the prompts of trace lines that give only a length
// and the ids of their blocks: equal ids give equal text, so a server's
// prefix cache sees the trace's own reuse, and nothing else.
type TraceBlocks struct {
	// BlockTokens is the tokens one hash id stands for (default 512).
	BlockTokens int
	// WordsPerToken scales filler to the server's tokenizer (see
	// Synthetic).
	WordsPerToken float64
	// Nonce and Seed make a run's blocks its own: a later run's blocks
	// never match the ones an earlier run left in the cache.
	Nonce string
	Seed  uint64
}

// Prompt is the text of entry e sent as request i.
func (b TraceBlocks) Prompt(e DatasetEntry, i int) string {
	size := b.BlockTokens
	if size <= 0 {
		size = DefaultTraceBlockTokens
	}
	seed := b.Seed ^ hashString(b.Nonce)
	if len(e.HashIDs) == 0 {
		return Filler(e.InputLength, b.WordsPerToken, seed, uint64(i))
	}
	ids := e.HashIDs
	// The ids cover ceil(length / size) blocks, the last one partly;
	// a line whose ids and length disagree keeps the length.
	if need := (e.InputLength + size - 1) / size; need < len(ids) {
		ids = ids[:max(need, 1)]
	}
	var sb strings.Builder
	left := e.InputLength
	for k, id := range ids {
		n := size
		if k == len(ids)-1 {
			n = min(left, size)
		}
		if k > 0 {
			sb.WriteByte(' ')
		}
		// A block's text depends on its id alone, and a shorter block is
		// the start of the longer one, as a partial last block must be.
		sb.WriteString(Filler(max(n, 1), b.WordsPerToken, seed, 0xb10c0000_0000_0000|uint64(id)))
		left -= n
	}
	if left > 0 {
		// More length than the ids cover: the rest is this request's own.
		sb.WriteByte(' ')
		sb.WriteString(Filler(left, b.WordsPerToken, seed, uint64(i)))
	}
	return sb.String()
}

// SharedTokens is how many of e's tokens an earlier line of the trace
// already sent as the same blocks (seen holds, per id, the longest part of
// its block sent so far, and is updated): what a prefix cache that kept
// everything, token by token, would hit.
func (b TraceBlocks) SharedTokens(e DatasetEntry, seen map[int]int) int {
	size := b.BlockTokens
	if size <= 0 {
		size = DefaultTraceBlockTokens
	}
	shared, prefix := 0, true
	left := e.InputLength
	for _, id := range e.HashIDs {
		n := min(left, size)
		if n <= 0 {
			break
		}
		// A cache matches a prefix: a block counts only when every block
		// before it matched whole.
		if prefix {
			shared += min(n, seen[id])
			prefix = seen[id] >= n
		}
		seen[id] = max(seen[id], n)
		left -= n
	}
	return shared
}

// TraceSchedule returns the lines' arrival offsets, from the first line's
// timestamp, divided by speedup.
func TraceSchedule(entries []DatasetEntry, speedup float64) []time.Duration {
	out := make([]time.Duration, len(entries))
	if len(entries) == 0 || speedup <= 0 {
		return out
	}
	first := entries[0].Timestamp
	for _, e := range entries {
		first = min(first, e.Timestamp)
	}
	for i, e := range entries {
		out[i] = time.Duration(float64(e.Timestamp-first) / speedup)
	}
	return out
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
