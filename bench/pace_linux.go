package bench

import (
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawSleepLimit bounds the sleeps made as raw system calls (see
// preciseSleep).
const rawSleepLimit = 250 * time.Microsecond

// preciseSleep sleeps d (at most coarseMargin) in clock_nanosleep, to an
// absolute instant on the monotonic clock so that a signal's interruption
// resumes toward the same end.
//
// Short sleeps are raw system calls. An ordinary one tells the scheduler
// the thread may block, and since the request just dispatched waits in
// this processor's run queue, the runtime hands the processor to another
// thread and takes it back afterwards: at 10,000 arrivals a second that
// cost a quarter more CPU than sleeping holding it. Holding is harmless
// only while it is short and there is another processor to steal the
// waiting goroutines, hence the limit and the GOMAXPROCS test.
func preciseSleep(d time.Duration) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		time.Sleep(d)
		return
	}
	end := unix.NsecToTimespec(ts.Nano() + int64(d))
	raw := d <= rawSleepLimit && runtime.GOMAXPROCS(0) > 1
	for {
		var errno unix.Errno
		if raw {
			_, _, errno = unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC,
				unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&end)), 0, 0, 0)
		} else {
			_, _, errno = unix.Syscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC,
				unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&end)), 0, 0, 0)
		}
		if errno != unix.EINTR {
			return
		}
	}
}
