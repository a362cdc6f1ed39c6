package driver

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// preciseSleep sleeps d (at most coarseMargin) in clock_nanosleep, which
// wakes within tens of microseconds of its end. It is relative: an
// absolute end would take a system call of its own to read the monotonic
// clock (x/sys/unix does not use the vDSO), so after a signal's
// interruption it resumes with what is left by Go's clock. It reports
// false when the sleep did not move Go's clock at all: the fake time of a
// synctest bubble, which only Go's own waits advance. It then sleeps d in
// Go, as its caller should from then on.
func preciseSleep(d time.Duration) bool {
	start := time.Now()
	for left := d; left > 0; left = d - time.Since(start) {
		ts := unix.NsecToTimespec(int64(left))
		_, _, errno := unix.Syscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC,
			0, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if time.Since(start) == 0 {
			time.Sleep(d)
			return false
		}
		return true
	}
	return true
}
