//go:build !linux

package driver

import "time"

// preciseSleep falls back to the runtime's timer where clock_nanosleep is
// not at hand.
func preciseSleep(d time.Duration) bool { time.Sleep(d); return true }
