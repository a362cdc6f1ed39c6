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

func baseSchedConfig(blocks int) sched.Config {
	hw := sched.Hardware{HBMGiB: 80, BandwidthGBps: 3000, PeakTFLOPS: 989}
	shape := sched.ModelShape{ParamsBillions: 6.74, BytesPerParameter: 2, GlobalKVBytesPerToken: 512 * 1024, TensorParallel: 1}
	if blocks == 0 {
		blocks = sched.KVBlocks(hw, shape, 0.9, 0, 16)
	}
	return sched.Config{NumBlocks: blocks, BlockSize: 16, MaxNumBatchedTokens: 2048, MaxNumSeqs: 16,
		PrefixCaching: true, Costs: sched.NewCosts(hw, shape, sched.Tuning{ComputeEff: 1, MemoryEff: 1, StepOverhead: 0.001})}
}

// TestWallAndVirtualAgree feeds the same arrivals to the wall-time driver
// and to the virtual-time runner: every request's simulated TTFT and E2E
// must be equal bit for bit.
func TestWallAndVirtualAgree(t *testing.T) {
	cfg := baseSchedConfig(600)
	type spec struct {
		at      time.Duration
		prompt  []uint64
		out     int
		promptN int
	}
	var specs []spec
	for i := 0; i < 24; i++ {
		n := 100 + (i*397)%1500
		p := make([]uint64, n)
		for j := range p {
			p[j] = uint64(i%5)<<40 | uint64(j) // a few shared prefixes
		}
		specs = append(specs, spec{at: time.Duration(50+i*13) * time.Millisecond, prompt: p, out: 5 + i%17, promptN: n})
	}
	var reqs []sched.Request
	for i, s := range specs {
		ids := append(append([]uint64(nil), s.prompt...), make([]uint64, s.out)...)
		for j := 0; j < s.out; j++ {
			ids[len(s.prompt)+j] = content.TokenID(fmt.Sprintf(" w%d", j))
		}
		reqs = append(reqs, sched.Request{ID: int64(i), Arrival: s.at.Seconds(), IDs: ids, OutputLen: s.out})
	}
	want := sched.RunVirtual(cfg, reqs, nil)

	eng := NewScheduler(sched.New(cfg), nil)
	defer eng.Close()
	type got struct{ ttft, e2e float64 }
	results := make([]got, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		tokens := make([]string, s.out)
		for j := range tokens {
			tokens[j] = fmt.Sprintf(" w%d", j)
		}
		plan := &Plan{PromptTokens: s.promptN, PromptIDs: s.prompt, Tokens: tokens}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := eng.Stream(context.Background(), plan, eng.epoch.Add(s.at), func(ev TokenEvent) error {
				if ev.Index == 0 {
					results[i].ttft = ev.SimTime
				}
				results[i].e2e = ev.SimTime
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := range specs {
		if results[i].ttft != want[i].TTFT() || results[i].e2e != want[i].E2E() {
			t.Errorf("request %d: wall TTFT %.17g E2E %.17g, virtual %.17g %.17g",
				i, results[i].ttft, results[i].e2e, want[i].TTFT(), want[i].E2E())
		}
	}
}

// TestSchedulerStreamStopsWithContext checks that a stream whose context
// ends mid-answer returns at once with the context's error, sends nothing
// more, and leaves the scheduler with nothing running or waiting.
func TestSchedulerStreamStopsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng := NewScheduler(sched.New(baseSchedConfig(600)), nil)
		defer eng.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		prompt := make([]uint64, 64)
		for i := range prompt {
			prompt[i] = uint64(i)
		}
		plan := &Plan{PromptTokens: len(prompt), PromptIDs: prompt, Tokens: make([]string, 500)}
		sent := 0
		_, err := eng.Stream(ctx, plan, time.Now(), func(TokenEvent) error {
			sent++
			if sent == 3 {
				cancel()
			}
			return nil
		})
		if err != context.Canceled || sent != 3 {
			t.Fatalf("err %v after %d tokens, want context.Canceled after 3", err, sent)
		}
		// The scheduler takes the abort in at the end of the step under way.
		time.Sleep(time.Second)
		synctest.Wait()
		if st := eng.State(); st.Running != 0 || st.Waiting != 0 || st.UsedBlocks != 0 {
			t.Errorf("after the cancel: %+v, want nothing running, waiting or held", st)
		}
	})
}
