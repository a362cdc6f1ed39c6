package model

import "errors"

// within reports whether v lies in [lo, hi]; NaN never does. The bounds
// below are wide of every GPU and model made, and keep every time and
// energy the cost model derives from them a number Go can hold.
func within(v, lo, hi float64) bool { return v >= lo && v <= hi }

// validate bounds one GPU profile's figures.
func (hw HardwareSpec) validate() error {
	switch {
	case !within(hw.HBMGiB, 1e-3, 1e5) || !within(hw.MemoryBandwidthGBps, 1, 1e6) || !within(hw.PeakTFLOPS, 0.01, 1e6):
		return errors.New("hbm_gib from 0.001 to 100,000, memory_bandwidth_gbps from 1 to 1,000,000 and " +
			"peak_tflops from 0.01 to 1,000,000")
	case hw.PeakTFLOPSFP8 != 0 && !within(hw.PeakTFLOPSFP8, 0.01, 1e6):
		return errors.New("peak_tflops_fp8 0 (none) or from 0.01 to 1,000,000")
	case !within(hw.InterconnectGBps, 0, 1e6) || !within(hw.InterconnectLatencyUs, 0, 1e6):
		return errors.New("interconnect_gbps from 0 to 1,000,000 and interconnect_latency_us from 0 to 1,000,000")
	case !(within(hw.IdlePowerW, 0, 1e5) && within(hw.MaxPowerW, 0, 1e5)) || hw.MaxPowerW > 0 && hw.IdlePowerW > hw.MaxPowerW:
		return errors.New("idle_power_w and max_power_w must be watts, the idle draw at most the limit")
	}
	return hw.GEMM.validate()
}
