// Package sched is the pure core of the simulator's continuous-batching
// engine, in three tiers with dependencies pointing down: resources and cost
// (sequences, the paged KV-cache block pool, the roofline cost model), the
// policy that decides each step (admit, batch, grow, preempt), and a
// virtual-time runner. It has no goroutines and no clock: time is a float of
// simulated seconds passed in by the caller.
package sched

// blockPool is a paged KV cache with automatic prefix caching, after vLLM
// V1's KVCacheManager (vllm/v1/core/kv_cache_manager.py, block_pool.py):
//   - free blocks sit in a doubly-linked queue; allocation pops the head,
//     and a cached block popped there is evicted (its hash forgotten);
//   - freed blocks are appended to the tail, a request's last blocks first,
//     so they are evicted first and its prefix survives longest;
//   - a full, computed block is registered under a chained hash and can be
//     "touched" by a later request: its reference count rises and it leaves
//     the free queue.
//
// The queue starts as every block in order, and a freed block joins its
// tail, so the blocks never used yet always stand at its head, in order.
// Those are not stored: blocks [len(ref), n) are the queue's head, and the
// linked blocks (head to tail) follow them. A block's bookkeeping is made
// when it is first allocated, so a cache of a billion blocks costs what a
// run touches, not 46 GB before the first step.
type blockPool struct {
	n          int
	ref        []int32
	hash       []uint64
	hashed     []bool
	prev, next []int32 // free queue links of blocks used before; -1 ends
	inFree     []bool
	head, tail int32
	numFree    int
	cached     *hashTable
}

// poolRoom is the bookkeeping made ahead for a pool's first blocks.
const poolRoom = 4096

func newBlockPool(n int) *blockPool {
	room := min(n, poolRoom)
	return &blockPool{
		n: n, ref: make([]int32, 0, room), hash: make([]uint64, 0, room), hashed: make([]bool, 0, room),
		prev: make([]int32, 0, room), next: make([]int32, 0, room), inFree: make([]bool, 0, room),
		head: -1, tail: -1, numFree: n, cached: newHashTable(room),
	}
}

// fresh takes the first block never used, the queue's head while one is
// left, and makes its bookkeeping.
func (p *blockPool) fresh() int32 {
	b := int32(len(p.ref))
	p.ref, p.hash, p.hashed = append(p.ref, 0), append(p.hash, 0), append(p.hashed, false)
	p.prev, p.next, p.inFree = append(p.prev, -1), append(p.next, -1), append(p.inFree, false)
	p.numFree--
	return b
}

func (p *blockPool) pushTail(b int32) {
	p.prev[b], p.next[b] = p.tail, -1
	if p.tail >= 0 {
		p.next[p.tail] = b
	} else {
		p.head = b
	}
	p.tail = b
	p.inFree[b] = true
	p.numFree++
}

func (p *blockPool) remove(b int32) {
	if p.prev[b] >= 0 {
		p.next[p.prev[b]] = p.next[b]
	} else {
		p.head = p.next[b]
	}
	if p.next[b] >= 0 {
		p.prev[p.next[b]] = p.prev[b]
	} else {
		p.tail = p.prev[b]
	}
	p.inFree[b] = false
	p.numFree--
}

// allocate takes k blocks from the head of the free queue, evicting any
// cached contents they held. The caller checked that k blocks are free.
func (p *blockPool) allocate(dst []int32, k int) []int32 {
	for ; k > 0; k-- {
		var b int32
		if len(p.ref) < p.n {
			b = p.fresh()
		} else {
			b = p.head
			p.remove(b)
			if p.hashed[b] {
				p.cached.deleteIf(p.hash[b], b)
				p.hashed[b] = false
			}
		}
		p.ref[b] = 1
		dst = append(dst, b)
	}
	return dst
}

// touch takes a reference on a cached block found by a prefix lookup.
func (p *blockPool) touch(b int32) {
	if p.ref[b] == 0 && p.inFree[b] {
		p.remove(b)
	}
	p.ref[b]++
}

// free releases blocks, tail first, so the end of a sequence is evicted
// before its prefix.
func (p *blockPool) free(blocks []int32) {
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		p.ref[b]--
		if p.ref[b] == 0 {
			p.pushTail(b)
		}
	}
}

// register records that block b holds the full block with hash h. An
// existing entry for h wins: V1 block tables are append-only, so duplicate
// blocks with the same content can exist.
func (p *blockPool) register(b int32, h uint64) {
	if p.hashed[b] {
		return
	}
	if p.cached.putIfAbsent(h, b) {
		p.hash[b], p.hashed[b] = h, true
	}
}

// lookup returns the cached block holding h, if any.
func (p *blockPool) lookup(h uint64) (int32, bool) {
	return p.cached.get(h)
}

// used is the number of blocks held by sequences.
func (p *blockPool) used() int { return p.n - p.numFree }

// blockHash chains a block's token ids onto its parent's hash, so equal
// hashes mean equal prefixes (up to 64-bit collisions).
func blockHash(parent uint64, ids []uint64) uint64 {
	h := parent ^ 0x9e3779b97f4a7c15
	for _, id := range ids {
		h ^= id
		h *= 0x100000001b3
		h ^= h >> 29
	}
	return h
}

// reservedAhead is the blocks the running requests have reserved for the
// rest of their answers and not yet taken (Config.ReserveOutput).
func (c *Core) reservedAhead() int {
	n := 0
	for _, s := range c.running {
		n += max(c.BlocksFor(s.PromptLen+s.OutputLen)-len(s.blocks), 0)
	}
	return n
}
