package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kneebench/knee/simulator/content"
	"github.com/kneebench/knee/simulator/sched"
)

// A disaggregated model driven in wall time (in a bubble, whose clock
// moves only when every goroutine waits) gives every request the
// timeline the pure core gives it in virtual time, bit for bit, and its
// phases with it.
func TestDisaggWallAndVirtualAgree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := baseSchedConfig(0)
		cfg := sched.DisaggConfig{Prefill: c, Decode: c, PrefillReplicas: 2, DecodeReplicas: 1, LinkGbps: 10, Routing: sched.RoundRobin}
		type spec struct {
			at     time.Duration
			prompt []uint64
			out    int
		}
		var specs []spec
		var reqs []sched.Request
		for i := range 16 {
			p := make([]uint64, 200+(i*397)%1500)
			for j := range p {
				p[j] = uint64(i%3)<<40 | uint64(j)
			}
			s := spec{at: time.Duration(50+i*37) * time.Millisecond, prompt: p, out: 3 + i%9}
			specs = append(specs, s)
			ids := append([]uint64(nil), p...)
			for j := range s.out {
				ids = append(ids, content.TokenID(fmt.Sprintf(" w%d", j)))
			}
			reqs = append(reqs, sched.Request{ID: int64(i), Arrival: s.at.Seconds(), IDs: ids, OutputLen: s.out})
		}
		want := sched.RunDisaggVirtual(cfg, reqs)
		eng := NewDisaggScheduler(cfg, nil)
		defer eng.Close()
		type got struct {
			ttft, e2e float64
			info      StreamInfo
		}
		results := make([]got, len(specs))
		var wg sync.WaitGroup
		for i, s := range specs {
			tokens := make([]string, s.out)
			for j := range tokens {
				tokens[j] = fmt.Sprintf(" w%d", j)
			}
			plan := &Plan{PromptTokens: len(s.prompt), PromptIDs: s.prompt, Tokens: tokens}
			wg.Go(func() {
				time.Sleep(time.Until(eng.epoch.Add(s.at)))
				info, err := eng.Stream(context.Background(), plan, eng.epoch.Add(s.at), func(ev TokenEvent) error {
					if ev.Index == 0 {
						results[i].ttft = ev.SimTime
					}
					results[i].e2e = ev.SimTime
					return nil
				})
				results[i].info = info
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		for i := range specs {
			r, w := results[i], want[i]
			if r.ttft != w.TTFT() || r.e2e != w.E2E() {
				t.Errorf("request %d: wall TTFT %.17g E2E %.17g, virtual %.17g %.17g", i, r.ttft, r.e2e, w.TTFT(), w.E2E())
			}
			if r.info.Phases == nil || *r.info.Phases != w.Phases {
				t.Errorf("request %d: phases %+v, virtual %+v", i, r.info.Phases, w.Phases)
			}
		}
		if st := eng.State(); st.Running != 0 || st.Waiting != 0 {
			t.Errorf("left %d running and %d waiting", st.Running, st.Waiting)
		}
	})
}
