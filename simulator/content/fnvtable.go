package content

// fnvTable makes FNV-1a over a word a multiply, an add and two table
// reads, where byte by byte it is a multiply per byte, each waiting for
// the one before: a long prompt's digest was the largest part of saying
// it.
//
// A step of FNV-1a, h' = (h ^ b) * P, equals h*P + d*P with d = (h^b) − h,
// which depends only on h's low byte; and h's low byte after the step
// depends only on its low byte before it. So over a word of k bytes, from
// any h whose low byte is L, the hash is h*P^k plus a sum fixed by the word
// and L, and its low byte is fixed by them too. The low bytes are followed
// through a small table (a chain of loads from a few kilobytes per word),
// and the hash itself is a multiply and an add per word that no longer
// waits on each byte.
type fnvTable struct {
	pow []uint64      // P to each word's length
	sum [][256]uint64 // the sum, by the low byte before the word
	low [][256]uint8  // the low byte after the word, by the one before
}

func newFNVTable(n int) fnvTable {
	return fnvTable{pow: make([]uint64, n), sum: make([][256]uint64, n), low: make([][256]uint8, n)}
}

// put fills word i's entries for the bytes of s.
func (t *fnvTable) put(i int, s string) {
	pow := uint64(1)
	for range len(s) {
		pow *= fnvPrime
	}
	t.pow[i] = pow
	for l := range 256 {
		h := fnvString(uint64(l), s)
		t.sum[i][l] = h - uint64(l)*pow
		t.low[i][l] = uint8(h)
	}
}

// over continues FNV-1a hash h over the words, each the bytes it was added
// with.
func (t *fnvTable) over(h uint64, words []uint16) uint64 {
	l := uint8(h)
	for _, w := range words {
		h = h*t.pow[w] + t.sum[w][l]
		l = t.low[w][l]
	}
	return h
}
