package sched

// hashTable maps block hashes to block ids with open addressing, linear
// probing and backward-shift deletion. It replaces a Go map on the hot
// path of prefix caching: a map under constant insert/delete churn slows
// its probes, and the virtual-time runner does several of these per block.
// It never holds more entries than the pool has made blocks, and doubles
// to stay at least twice that, so probes stay short.
type hashTable struct {
	keys []uint64
	vals []int32 // block id + 1; 0 marks an empty slot
	mask uint64
	n    int
}

func newHashTable(capacity int) *hashTable {
	size := 16
	for size < 2*capacity {
		size <<= 1
	}
	return &hashTable{keys: make([]uint64, size), vals: make([]int32, size), mask: uint64(size - 1)}
}

func (t *hashTable) home(h uint64) uint64 { return (h * 0x9e3779b97f4a7c15) >> 20 & t.mask }

// get returns the block stored under h.
func (t *hashTable) get(h uint64) (int32, bool) {
	for i := t.home(h); ; i = (i + 1) & t.mask {
		v := t.vals[i]
		if v == 0 {
			return 0, false
		}
		if t.keys[i] == h {
			return v - 1, true
		}
	}
}

// putIfAbsent stores b under h unless h is present; it reports whether it
// stored.
func (t *hashTable) putIfAbsent(h uint64, b int32) bool {
	if 2*(t.n+1) > len(t.keys) {
		t.grow()
	}
	i := t.home(h)
	for ; t.vals[i] != 0; i = (i + 1) & t.mask {
		if t.keys[i] == h {
			return false
		}
	}
	t.keys[i], t.vals[i] = h, b+1
	t.n++
	return true
}

// grow doubles the table and places every entry again.
func (t *hashTable) grow() {
	keys, vals := t.keys, t.vals
	*t = hashTable{keys: make([]uint64, 2*len(keys)), vals: make([]int32, 2*len(vals)), mask: uint64(2*len(keys) - 1)}
	for i, v := range vals {
		if v != 0 {
			t.putIfAbsent(keys[i], v-1)
		}
	}
}

// deleteIf removes h if it maps to block b.
func (t *hashTable) deleteIf(h uint64, b int32) {
	i := t.home(h)
	for {
		v := t.vals[i]
		if v == 0 {
			return
		}
		if t.keys[i] == h {
			if v-1 != b {
				return
			}
			break
		}
		i = (i + 1) & t.mask
	}
	// Backward-shift: pull later entries of the cluster into the hole when
	// their home lies at or before it, so lookups never need tombstones.
	for j := (i + 1) & t.mask; t.vals[j] != 0; j = (j + 1) & t.mask {
		k := t.home(t.keys[j])
		if (j > i && (k <= i || k > j)) || (j < i && k <= i && k > j) {
			t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
			i = j
		}
	}
	t.vals[i] = 0
	t.n--
}
