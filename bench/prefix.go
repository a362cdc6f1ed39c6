package bench

import (
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// prefixBlock is the grain, in bytes of prompt text, at which the tracker
// compares prompts: about 16 tokens, a vLLM block.
const prefixBlock = 64

// maxPrefixBlocks bounds the tracker's memory (about 30 MB); past it no
// new blocks are kept, and later shares may read low.
const maxPrefixBlocks = 1 << 20

// PrefixTracker says what share of each measured request's prompt an
// earlier measured request of the run already sent: the cache hit a
// server that kept every prefix would give it, which a run expects and
// compares with what the server says it cached. It chains a hash over
// blocks of the prompt's text, as a prefix cache chains its blocks, so
// only a shared start counts.
type PrefixTracker struct {
	mu   sync.Mutex
	seed maphash.Seed
	seen map[uint64]struct{}
	full bool
}

// NewPrefixTracker returns a tracker that has seen nothing.
func NewPrefixTracker() *PrefixTracker {
	return &PrefixTracker{seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}}
}

// Share returns the shared share of req's prompt text and records its
// blocks.
func (t *PrefixTracker) Share(req *workload.Request) float32 {
	text := promptText(req)
	if len(text) == 0 {
		return 0
	}
	var h maphash.Hash
	h.SetSeed(t.seed)
	t.mu.Lock()
	defer t.mu.Unlock()
	shared, prefix := 0, true
	for off := 0; off+prefixBlock <= len(text); off += prefixBlock {
		h.WriteString(text[off : off+prefixBlock])
		sum := h.Sum64()
		if _, ok := t.seen[sum]; ok && prefix {
			shared = off + prefixBlock
			continue
		}
		prefix = false
		if len(t.seen) < maxPrefixBlocks {
			t.seen[sum] = struct{}{}
		} else {
			t.full = true
		}
	}
	return float32(shared) / float32(len(text))
}

// promptText is the request as one string, roles included, so prompts
// that differ only in who says what do not match.
func promptText(req *workload.Request) string {
	if len(req.Messages) == 0 {
		return req.Prompt
	}
	n := 0
	for _, m := range req.Messages {
		n += len(m.Role) + len(m.Content) + 2
	}
	b := make([]byte, 0, n)
	for _, m := range req.Messages {
		b = append(b, m.Role...)
		b = append(b, 0)
		b = append(b, m.Content...)
		b = append(b, 1)
	}
	return string(b)
}

// templateAllowance is the prompt tokens a server may cache beyond what
// the prompts share: a chat template's fixed opening (about 30 tokens for
// Llama 3's) and the block it rounds up to.
const templateAllowance = 48

// cacheWarnings compares the cache hit the server reports with the one the
// prompts' own overlap explains, and says when they disagree by more than
// a template's opening and a few points: more cached than expected means
// something outside the run warmed the cache (an earlier run, a probe,
// other traffic), less means the server evicted or does not cache
// prefixes.
func cacheWarnings(c results.Cache, meanPrompt float64, trackerFull bool) []string {
	var out []string
	if trackerFull {
		out = append(out, "the run sent more prompt text than knee tracks for the expected cache hit; the expected share reads low")
	}
	if !c.Reported || c.Expected == nil || meanPrompt <= 0 {
		return out
	}
	exp := *c.Expected
	tol := 0.03 + templateAllowance/meanPrompt
	switch {
	case c.HitRate > exp+tol:
		out = append(out, fmt.Sprintf("the server reports %.1f%% of prompt tokens cached where this run's prompts share %.1f%% with each other: "+
			"more than a chat template's opening explains, so the cache was warm from outside the run (an earlier run, another client), and TTFT reads low",
			100*c.HitRate, 100*exp))
	case exp > 0.05 && c.HitRate < exp-tol:
		out = append(out, fmt.Sprintf("this run's prompts share %.1f%% of their tokens with earlier ones, but the server reports only %.1f%% cached: "+
			"it evicted them or does not cache prefixes (vLLM: --enable-prefix-caching; SGLang caches by default)", 100*exp, 100*c.HitRate))
	}
	return out
}
