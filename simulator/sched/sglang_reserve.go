package sched

import "math"

// SGLang's scheduler keeps room in the KV cache for the answers of the
// requests it runs (sglang/srt/managers/schedule_policy.py, PrefillAdder):
// a prompt, or a chunk of one, is added only while the free tokens exceed
// the running requests' remaining answers (each at most 4,096) times the
// new-token ratio, plus, for a prompt added whole, its own answer. The
// ratio starts at 0.7, falls by (0.7 − 0.14)/600 each decode batch to
// 0.14, and after a retraction is set to the running requests' decoded
// share (scheduler.py, schedule_batch.py retract_decode). Without the
// reserve a long prompt's chunks fill the cache, the decodes preempt it,
// and it is admitted again: no request ever decodes.
const (
	initNewTokenRatio  = 0.7
	minNewTokenRatio   = 0.14
	newTokenRatioDecay = (initNewTokenRatio - minNewTokenRatio) / 600
	clipMaxNewTokens   = 4096
	retractDecodeSteps = 20
)

// decodeReserve is the blocks kept for the running requests' answers
// (Config.ReserveDecodes).
func (c *Core) decodeReserve() int {
	tokens := 0.0
	for _, s := range c.running {
		if s.decoding() {
			tokens += float64(min(s.OutputLen-s.generated, clipMaxNewTokens)) * c.newTokenRatio
		}
	}
	return int(math.Ceil(tokens / float64(c.cfg.BlockSize)))
}

// answerReserve is the blocks a prompt added whole reserves for its own
// answer under Config.ReserveDecodes.
func (c *Core) answerReserve(s *Seq) int {
	bs := c.cfg.BlockSize
	return (min(s.OutputLen, clipMaxNewTokens) + bs - 1) / bs
}

// chunkRoom is how many of n prompt tokens s may compute this step under
// Config.ReserveDecodes: those its blocks already hold room for, and those
// the free blocks above the decode reserve take.
func (c *Core) chunkRoom(s *Seq, n int) int {
	bs := c.cfg.BlockSize
	held := len(s.blocks)*bs - s.computed
	free := (c.pool.numFree - c.decodeReserve()) * bs
	return max(min(n, held+free), 0)
}

// updateNewTokenRatio follows a step: a decode batch lowers the ratio, a
// retraction sets it to what the running requests have decoded of their
// answers (plus 20 steps each), at most 1.
func (c *Core) updateNewTokenRatio(st *Step) {
	if !c.cfg.ReserveDecodes {
		return
	}
	if len(st.Preempted) > 0 {
		decoded, budget := 0, 0
		for _, s := range c.running {
			decoded += s.generated
			budget += s.OutputLen
		}
		if budget > 0 {
			c.newTokenRatio = min(1, float64(decoded+retractDecodeSteps*len(c.running))/float64(budget))
		}
		return
	}
	if st.DecodeTokens > 0 && st.PrefillTokens == 0 {
		c.newTokenRatio = max(c.newTokenRatio-newTokenRatioDecay, minNewTokenRatio)
	}
}
