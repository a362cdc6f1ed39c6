package content

import "slices"

// IDCache keeps the token ids of long message texts (a request's but its
// last, which is new to it: see GenRequest.Known), so that a
// conversation, whose every turn sends again each message before it,
// has each text tokenised once rather than once a turn: a voice call's
// system prompt of thousands of tokens was tokenised at every turn, two
// fifths of a voice plan's time. A message's ids do not depend on the
// messages around it, so they are the same either way. The zero value is
// ready; a nil cache keeps nothing. It is not safe for concurrent use.
type IDCache struct {
	ids  map[string][]uint64
	kept int
	// limit is the most ids kept (0: maxCachedIDs).
	limit int
}

// Texts shorter than minCachedText are tokenised each time (a lookup
// would cost about as much); past maxCachedIDs ids (64 MB, a few hundred
// calls' system prompts) the cache starts over.
const (
	minCachedText = 512
	maxCachedIDs  = 8 << 20
)

// appendIDs appends text's token ids to dst, as AppendTokenIDs does.
func (c *IDCache) appendIDs(dst []uint64, text string) []uint64 {
	if c == nil || len(text) < minCachedText {
		return AppendTokenIDs(dst, text)
	}
	if ids, ok := c.ids[text]; ok {
		return append(dst, ids...)
	}
	at := len(dst)
	dst = AppendTokenIDs(dst, text)
	n := len(dst) - at
	limit := c.limit
	if limit == 0 {
		limit = maxCachedIDs
	}
	if n > limit {
		return dst
	}
	if c.ids == nil || c.kept+n > limit {
		c.ids, c.kept = map[string][]uint64{}, 0
	}
	c.ids[text], c.kept = slices.Clone(dst[at:]), c.kept+n
	return dst
}
