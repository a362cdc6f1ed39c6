package sched

// Released reports whether token index of an answer of n tokens leaves
// the engine when computed, under a stream interval of k tokens (vLLM
// V1's and SGLang's --stream-interval): the first token at once, then a
// group each time k more are computed, and the last whatever the group
// holds (vLLM's output_processor.py: finished, or the first token, or
// k tokens since the last sent). A token not released leaves with the
// next that is. k of 0 or 1 releases every token.
func Released(index, n, k int) bool {
	return k <= 1 || index == 0 || index%k == 0 || index == n-1
}

// GroupStart is the first token of the group that token index, released,
// closes under a stream interval of k.
func GroupStart(index, k int) int {
	if k <= 1 || index == 0 {
		return index
	}
	return k*((index-1)/k) + 1
}
