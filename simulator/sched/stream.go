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

// Outputs says when the tokens a step computed leave the engine: every
// token, in groups of a stream interval, or (AtWindowEnd) at the end of
// a multi-step window.
type Outputs struct {
	Interval    int
	AtWindowEnd bool
}

// Outputs is the configuration's.
func (c Config) Outputs() Outputs {
	return Outputs{Interval: c.StreamInterval, AtWindowEnd: c.WindowOutputs && c.SchedulerSteps > 1}
}

// Release reports whether the token e of step st leaves now and, when it
// does, the first token of the group it closes. At a window's end a
// sequence sends every token it computed in the window, and a finished
// one its last at once (vLLM V0 answers a finished request at the step
// it finishes).
func (o Outputs) Release(st *Step, e Emission) (from int, ok bool) {
	if o.AtWindowEnd {
		if !st.WindowEnd && e.Index != e.Seq.OutputLen-1 {
			return 0, false
		}
		return max(e.Index-st.WindowStep, 0), true
	}
	if !Released(e.Index, e.Seq.OutputLen, o.Interval) {
		return 0, false
	}
	return GroupStart(e.Index, o.Interval), true
}
