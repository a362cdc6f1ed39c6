package bench

import (
	"errors"
	"fmt"
	"math"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/workload"
)

// RampStrategies are the shapes --ramp-up-strategy names, as vLLM's
// bench does.
var RampStrategies = []string{"linear", "exponential"}

// ramp sets the load's ramp from --ramp-up and its shape, or says why
// the load takes none: a closed loop has no rate to raise, and a trace's
// arrivals are its own.
func (sp *Spec) ramp(load *driver.Load) error {
	if sp.RampUp == 0 {
		if sp.given("ramp-up-strategy") || sp.given("ramp-up-from") {
			return errors.New("--ramp-up-strategy and --ramp-up-from shape a ramp: give --ramp-up, its duration")
		}
		return nil
	}
	if sp.RampUp < 0 {
		return errors.New("--ramp-up must not be negative")
	}
	if err := outsideDuration("--ramp-up", sp.RampUp, MaxWindow); err != nil {
		return err
	}
	r := workload.Ramp{Duration: sp.RampUp, From: -1}
	switch sp.RampUpStrategy {
	case "", "linear":
	case "exponential":
		r.Exponential = true
	default:
		return fmt.Errorf("--ramp-up-strategy must be linear or exponential, got %q", sp.RampUpStrategy)
	}
	if sp.given("ramp-up-from") {
		if math.IsNaN(sp.RampUpFrom) || math.IsInf(sp.RampUpFrom, 0) || sp.RampUpFrom < 0 || sp.RampUpFrom > MaxRate {
			return fmt.Errorf("--ramp-up-from must be a rate from 0 to %g per second, got %v", float64(MaxRate), sp.RampUpFrom)
		}
		r.From = sp.RampUpFrom
	}
	switch {
	case load.Concurrency > 0:
		return errors.New("--ramp-up raises an open loop's rate: give --rate (or a sweep's --rates), not --concurrency")
	case load.Trace != nil:
		return fmt.Errorf("--dataset %s is a trace: its timestamps are the arrivals, so it takes no --ramp-up", sp.Data.Path)
	}
	if err := r.Validate(load.Rate); err != nil {
		return fmt.Errorf("--ramp-up: %w", err)
	}
	load.Ramp = r
	return nil
}
