package sched

import "fmt"

// ResetPrefixCache forgets every cached block, as vLLM's
// reset_prefix_cache does, so the next request finds the cache cold. Like
// vLLM's, it refuses while any request holds blocks (running or
// preempted mid-way), since their blocks cannot be forgotten under them;
// the error says how many.
func (c *Core) ResetPrefixCache() error {
	if used := c.pool.used(); used > 0 {
		return fmt.Errorf("%d KV blocks are still in use by %d running requests", used, len(c.running))
	}
	p := c.pool
	for b := range p.hashed {
		p.hashed[b], p.hash[b] = false, 0
	}
	p.cached = newHashTable(min(p.n, poolRoom))
	return nil
}
