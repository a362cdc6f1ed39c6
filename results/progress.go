package results

import (
	"os"
	"runtime"
	"time"
)

// Progress is a live snapshot of a running level, taken from counters and
// histograms the load loop already keeps: reading it never slows a send.
// The client's progress line and live view show it.
type Progress struct {
	Elapsed          time.Duration
	Sent, OK, Errors int64
	InFlight         int64
	// TTFTP50ms and TTFTP95ms are the time to first token from the
	// schedule, over the level's measured requests so far.
	TTFTP50ms, TTFTP95ms float64
	// Recent* are over the requests that ended in the last RecentWindow
	// (RecentCount of them, RecentTokens inter-token gaps): what the
	// server does now, rather than since the level began.
	RecentTTFTP50ms, RecentTTFTP95ms float64
	RecentITLP50ms, RecentITLP95ms   float64
	RecentCount, RecentTokens        int64
	// Health is the client's verdict on itself so far, from its timer
	// lateness, CPU and sends; TimerLagP99ms and CPUPercent (of the
	// machine) are its main figures.
	Health        string
	TimerLagP99ms float64
	CPUPercent    float64
	// Server is the server's gauges as last read (about a second ago at
	// most), its AtS from the level's start; nil when they are not read
	// or the last reading is stale.
	Server *SliceGauges
}

// NewEnvironment describes this machine, and knee's version, for result
// files.
func NewEnvironment(version string) Environment {
	host, _ := os.Hostname()
	return Environment{KneeVersion: version, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Host: host}
}
