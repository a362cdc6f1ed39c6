package sched

import (
	"math"
	"strings"
	"testing"
)

// llama-3.1-8b's KV in bf16: 32 layers × 8 KV heads × 128 × 2 (K, V) × 2
// bytes = 128 KiB a token.
var llama8b = ModelShape{ParamsBillions: 8.03, BytesPerParameter: 2, GlobalKVBytesPerToken: 128 * 1024, TensorParallel: 1}

func disaggConfig(p, d int, gbps float64) DisaggConfig {
	c := Config{NumBlocks: KVBlocks(baseHW, llama8b, 0.9, 0, 16), BlockSize: 16, MaxNumBatchedTokens: 8192, MaxNumSeqs: 256,
		PrefixCaching: true, Costs: NewCosts(baseHW, llama8b, Tuning{ComputeEff: 0.5, MemoryEff: 0.8, StepOverhead: 0.002})}
	return DisaggConfig{Prefill: c, Decode: c, PrefillReplicas: p, DecodeReplicas: d, LinkGbps: gbps, Routing: RoundRobin}
}

func meanTTFT(out []DisaggOutcome) float64 {
	s := 0.0
	for _, o := range out {
		s += o.TTFT()
	}
	return s / float64(len(out))
}

// The transfer term is the KV's bytes over the link: 1,000 tokens of 128
// KiB take 1.048576 s at 1 Gb/s and 0.0104858 s at 100 Gb/s. (One such
// prompt a second would keep the 1 Gb/s link 105% busy: they come every
// two.)
func TestTransferIsTheKVOverTheLink(t *testing.T) {
	var reqs []Request
	for i := range 20 {
		reqs = append(reqs, withIDs(int64(i), 2*float64(i), uniquePrompt(uint64(i+1), 1000), 64))
	}
	slow := RunDisaggVirtual(disaggConfig(1, 1, 1), reqs)
	fast := RunDisaggVirtual(disaggConfig(1, 1, 100), reqs)
	for i := range reqs {
		ph := slow[i].Phases
		near(t, "transfer at 1 Gb/s", ph.Transfer(), 131072000/1e9*8, 1e-9)
		near(t, "transfer at 100 Gb/s", fast[i].Phases.Transfer(), 131072000/100e9*8, 1e-9)
		if slow[i].Tokens != 64 || fast[i].Tokens != 64 {
			t.Fatalf("request %d got %d and %d tokens, want 64", i, slow[i].Tokens, fast[i].Tokens)
		}
		sum := ph.PrefillQueue() + ph.Prefill() + ph.Transfer() + ph.DecodeQueue() + ph.FirstStep()
		near(t, "the phases' sum", sum, slow[i].TTFT(), 1e-9)
	}
	near(t, "TTFT at 1 Gb/s minus at 100 Gb/s", meanTTFT(slow)-meanTTFT(fast), 1.048576-0.0104858, 0.01)
}

// Transfers into one decode replica share its link: two prompts' KV
// sent at once take twice as long as one's.
func TestTransfersShareTheLink(t *testing.T) {
	reqs := []Request{withIDs(0, 0, uniquePrompt(1, 1000), 4), withIDs(1, 0, uniquePrompt(2, 1000), 4)}
	out := RunDisaggVirtual(disaggConfig(2, 1, 1), reqs)
	for i, o := range out {
		near(t, "shared transfer", o.Phases.Transfer(), 2*1.048576, 1e-6)
		if o.Phases.PrefillReplica != i {
			t.Errorf("request %d prefilled on replica %d, want %d (round robin)", i, o.Phases.PrefillReplica, i)
		}
	}
	// On two decode replicas each has a link to itself.
	out = RunDisaggVirtual(disaggConfig(2, 2, 1), reqs)
	for _, o := range out {
		near(t, "own link", o.Phases.Transfer(), 1.048576, 1e-6)
	}
}

// The decode replica computes only the prompt's last token before the
// first answer token, and a prefill replica's cache serves a repeated
// prompt.
func TestDecodeComputesOnlyTheLastPromptToken(t *testing.T) {
	prompt := uniquePrompt(9, 2048)
	reqs := []Request{withIDs(0, 0, prompt, 8), withIDs(1, 30, prompt, 8)}
	out := RunDisaggVirtual(disaggConfig(1, 1, 100), reqs)
	if fs := out[0].Phases.FirstStep(); fs > 0.05 {
		t.Errorf("the first decode step took %.3f s: it recomputed the prompt", fs)
	}
	if out[1].CachedTokens != 2032 {
		t.Errorf("the repeat hit %d tokens of the prefill replica's cache, want 2032", out[1].CachedTokens)
	}
	if out[1].Phases.Prefill() >= out[0].Phases.Prefill() {
		t.Errorf("a cached prompt's prefill %.4f s is not shorter than the first's %.4f s", out[1].Phases.Prefill(), out[0].Phases.Prefill())
	}
}

// An abort anywhere leaves the model idle and the link to the others.
func TestDisaggAbort(t *testing.T) {
	d := NewDisagg(disaggConfig(1, 1, 1))
	for i := range 3 {
		d.Add(withIDs(int64(i), 0, uniquePrompt(uint64(i+1), 1000), 8), 0)
	}
	d.Start(0)
	for d.InTransfer() < 3 {
		d.Advance(func(*Step) {})
	}
	d.Abort(1, d.NextEvent()/2)
	d.Abort(2, d.NextEvent()/2)
	got := 0
	for !d.Idle() {
		d.Advance(func(st *Step) { got += len(st.Emitted) })
		if math.IsInf(d.NextEvent(), 1) && !d.Idle() {
			t.Fatal("work left with no event to come")
		}
	}
	if got != 8 {
		t.Errorf("emitted %d tokens, want the one request's 8", got)
	}
}

func TestDisaggValidate(t *testing.T) {
	good := disaggConfig(1, 1, 1)
	bad := []struct {
		want string
		f    func(*DisaggConfig)
	}{
		{"each pool", func(c *DisaggConfig) { c.PrefillReplicas = 0 }},
		{"each pool", func(c *DisaggConfig) { c.DecodeReplicas = -1 }},
		{"link", func(c *DisaggConfig) { c.LinkGbps = 0 }},
		{"link's speed", func(c *DisaggConfig) { c.LinkGbps = math.NaN() }},
		{"positive", func(c *DisaggConfig) { c.LinkGbps = math.Inf(1) }},
		{"decode pool", func(c *DisaggConfig) { c.Decode.NumBlocks = 0 }},
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		c := good
		b.f(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: got %v", b.want, err)
		}
	}
}

func TestReleasedGroups(t *testing.T) {
	for _, c := range []struct {
		k, n     int
		released []int
	}{
		{1, 5, []int{0, 1, 2, 3, 4}},
		{4, 11, []int{0, 4, 8, 10}},
		{4, 9, []int{0, 4, 8}},
		{8, 3, []int{0, 2}},
	} {
		var got []int
		for i := range c.n {
			if Released(i, c.n, c.k) {
				got = append(got, i)
			}
		}
		if len(got) != len(c.released) {
			t.Fatalf("k %d n %d: released %v, want %v", c.k, c.n, got, c.released)
		}
		prev := -1
		for j, i := range got {
			if i != c.released[j] || GroupStart(i, c.k) != prev+1 {
				t.Errorf("k %d n %d: released %v (group of %d starts at %d), want %v", c.k, c.n, got, i, GroupStart(i, c.k), c.released)
			}
			prev = i
		}
	}
}

// Late in a long window a time's rounding is worth more than a byte on a
// fast link: a transfer must still end when due, not come due again and
// again at one instant (a plan of ten-minute windows spun so).
func TestTransfersEndLateOnAFastLink(t *testing.T) {
	var reqs []Request
	for i := range 200 {
		reqs = append(reqs, withIDs(int64(i), 600+0.013*float64(i), uniquePrompt(uint64(i+1), 4000), 4))
	}
	for _, o := range RunDisaggVirtual(disaggConfig(2, 1, 400), reqs) {
		if o.Tokens != 4 || !(o.Phases.Transfer() > 0) {
			t.Fatalf("request %d: %d tokens, transfer %.6f s", o.ID, o.Tokens, o.Phases.Transfer())
		}
	}
}

// A transfer on a 400 Gb/s link ends when it comes due, whatever the
// rounding of times late in a window.
func TestLinkEndsWhatIsDue(t *testing.T) {
	for i := range 2000 {
		l := &link{rate: 400e9 / 8}
		start := 600 + 0.0137*float64(i)
		l.start(1, 1e6*float64(1+i%997), start)
		l.start(2, 3e6*float64(1+i%13), start+0.0001)
		for n := 0; len(l.xfers) > 0; n++ {
			if n > 2 {
				t.Fatalf("case %d: %d transfers left after %d events at %.17g", i, len(l.xfers), n, l.nextDone())
			}
			l.done(l.nextDone())
		}
	}
}
