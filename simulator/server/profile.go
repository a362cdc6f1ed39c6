package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"

	"github.com/valyala/fasthttp"
)

// profiling is the CPU profile POST /start_profile began: the runtime
// has one CPU profile at a time, so it is the process's.
var profiling struct {
	sync.Mutex
	f *os.File
}

// profile starts or stops a CPU profile of the simulator in ProfileDir,
// as vLLM's /start_profile and /stop_profile do its torch profiler: a
// benchmark's measured window profiled, not its warm-up. A new file is
// made each time (knee-sim-profile-N.pprof, never over an existing one);
// a start while one runs, or a stop while none does, is a 409.
func (s *Server) profile(ctx *fasthttp.RequestCtx, start bool) {
	profiling.Lock()
	defer profiling.Unlock()
	if !start {
		if profiling.f == nil {
			writeError(ctx, &APIError{Status: 409, Type: "conflict_error", Code: "not_profiling", Message: "no profile is running: POST /start_profile first"})
			return
		}
		pprof.StopCPUProfile()
		name := profiling.f.Name()
		err := profiling.f.Close()
		profiling.f = nil
		if err != nil {
			writeError(ctx, &APIError{Status: 500, Type: "server_error", Code: "profile_write", Message: err.Error()})
			return
		}
		writeJSON(ctx, 200, map[string]any{"profile": name})
		return
	}
	if profiling.f != nil {
		writeError(ctx, &APIError{Status: 409, Type: "conflict_error", Code: "already_profiling", Message: "a profile is already running: POST /stop_profile first"})
		return
	}
	f, err := newProfileFile(s.opts.ProfileDir)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("%w (is --cpuprofile profiling the whole process?)", err)
		}
	}
	if err != nil {
		writeError(ctx, &APIError{Status: 409, Type: "conflict_error", Code: "profile_start", Message: err.Error()})
		return
	}
	profiling.f = f
	writeJSON(ctx, 200, map[string]any{"profiling": f.Name()})
}

// newProfileFile creates the next free knee-sim-profile-N.pprof in dir.
func newProfileFile(dir string) (*os.File, error) {
	for n := 1; n < 100000; n++ {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("knee-sim-profile-%d.pprof", n)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("%s holds 100,000 profiles already", dir)
}
