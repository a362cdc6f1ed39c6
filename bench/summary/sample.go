package summary

// maxSampledCompletions bounds the completions a shard of the collector
// keeps for the saturation verdict: 16,384 of 20 bytes, 330 KB, so a
// run's footprint stays flat however long it runs (8 shards: 131,072
// completions kept exactly, 2.6 MB at most; past that the verdict's
// counts are ratio estimates 0.05% apart, see sample_test.go).
const maxSampledCompletions = 1 << 14

// completionSample is a shard's completions, every one of them until it
// holds maxSampledCompletions, then a sample: those whose mark (a hash of
// their order) is a multiple of the stride, each standing for stride of
// them. Whenever it fills, the stride doubles and the entries whose mark
// the doubled stride does not divide go: about half. A hash, not every
// stride-th, so that no period in the workload (a dataset of 1,024
// prompts cycling) can alias with the stride. The saturation verdict's
// counts then err by a few hundredths of a percent, and its medians are a
// large sample's.
type completionSample struct {
	list   []completion
	stride uint32
	seen   uint64
	// merged marks a sample merged from others (merge): its entries
	// carry their weights.
	merged bool
}

// add books the next completion.
func (s *completionSample) add(c completion) {
	s.stride = max(s.stride, 1)
	s.seen++
	c.mark = uint32(mix(s.seen))
	if c.mark&(s.stride-1) != 0 {
		return
	}
	for len(s.list) >= maxSampledCompletions {
		s.stride *= 2
		kept := s.list[:0]
		for _, e := range s.list {
			if e.mark&(s.stride-1) == 0 {
				kept = append(kept, e)
			}
		}
		s.list = kept
		if c.mark&(s.stride-1) != 0 {
			return
		}
	}
	s.list = append(s.list, c)
}

// appendTo appends the sample to dst, each entry weighted so that they sum
// to the completions seen: counts drawn from it are then ratio estimates
// against the exact total (0.06% apart at a million, not 0.4%).
func (s *completionSample) appendTo(dst []completion) []completion {
	if s.merged {
		return append(dst, s.list...)
	}
	w := float32(0)
	if len(s.list) > 0 && uint64(len(s.list)) != s.seen {
		w = float32(float64(s.seen) / float64(len(s.list)))
	}
	for _, c := range s.list {
		c.weight = w
		dst = append(dst, c)
	}
	return dst
}

// mix is splitmix64's finaliser: a well-spread hash of x.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// merge adds o's entries to s, each keeping its weight in o: the merged
// list is for reading (appendTo), not for adding to.
func (s *completionSample) merge(o *completionSample) {
	if !s.merged {
		// Weigh s's own first (in place: entry i is written where it
		// was read).
		s.list = s.appendTo(s.list[:0])
		s.merged = true
	}
	s.list = o.appendTo(s.list)
	s.seen += o.seen
}
