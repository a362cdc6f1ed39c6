package sched

// StepPowerW is one GPU's draw through a step, between its idle draw and
// its power limit: half the range for a step bound by memory bandwidth
// (decode draws well under the limit), the whole range as the step's
// compute time fills it (prefill runs at the limit). An a priori model,
// not a measurement: knee sim's DCGM-shaped power and the predictions'
// energy per token both come from it, so they agree with each other, and
// a DCGM reading is what says how far both are from a real GPU.
func StepPowerW(idleW, maxW float64, st *Step) float64 {
	c := 0.0
	if st.Duration > 0 {
		c = min(max(st.Compute/st.Duration, 0), 1)
	}
	return idleW + (maxW-idleW)*(0.5+0.5*c)
}
