package sched

// hashed says the sequence has content the prefix cache can key: token
// ids, or their chain under the core's block size.
func (s *Seq) hashed(bs int) bool { return s.IDs != nil || (s.Chain != nil && s.ChainBlock == bs) }

// fullBlocks is how many full blocks of its content the sequence has.
func (s *Seq) fullBlocks(bs int) int {
	if s.IDs != nil {
		return len(s.IDs) / bs
	}
	return len(s.Chain)
}

// blockHashAt is the hash of its block b, parent that of block b-1 (or
// its root).
func (s *Seq) blockHashAt(b, bs int, parent uint64) uint64 {
	if s.IDs == nil {
		return s.Chain[b]
	}
	return blockHash(parent, s.IDs[b*bs:(b+1)*bs])
}

// ChainOf is the chained hashes of ids' full blocks of bs tokens under
// the root of adapter: what Request.Chain holds.
func ChainOf(ids []uint64, bs, adapter int) []uint64 {
	s := Seq{Request: Request{Adapter: adapter}}
	parent := s.root()
	out := make([]uint64, len(ids)/bs)
	for b := range out {
		parent = blockHash(parent, ids[b*bs:(b+1)*bs])
		out[b] = parent
	}
	return out
}

// root is the parent hash of a sequence's first block: its adapter, so
// no adapter's cached prefix serves another's (or the base model's).
func (s *Seq) root() uint64 { return uint64(s.Adapter) * 0x9e3779b97f4a7c15 }
