package sched

import (
	"math"
	"runtime"
	"strings"
	"testing"
)

// The base model of the issue: 6.74 B parameters at 2 bytes, 512 KiB of KV
// per token, blocks of 16, 80 GiB at 0.9 utilisation, 3,000 GB/s, 989
// TFLOPS, efficiencies 1, no overhead.
var (
	baseHW    = Hardware{HBMGiB: 80, BandwidthGBps: 3000, PeakTFLOPS: 989}
	baseModel = ModelShape{ParamsBillions: 6.74, BytesPerParameter: 2, GlobalKVBytesPerToken: 512 * 1024, TensorParallel: 1}
)

func baseConfig(blocks, budget, seqs int) Config {
	if blocks == 0 {
		blocks = KVBlocks(baseHW, baseModel, 0.9, 0, 16)
	}
	return Config{
		NumBlocks: blocks, BlockSize: 16, MaxNumBatchedTokens: budget, MaxNumSeqs: seqs,
		PrefixCaching: true, Costs: NewCosts(baseHW, baseModel, Tuning{ComputeEff: 1, MemoryEff: 1}),
	}
}

func near(t *testing.T, name string, got, want, relTol float64) {
	t.Helper()
	if math.Abs(got-want) > relTol*math.Abs(want) {
		t.Errorf("%s = %.6g, want %.6g (±%.2g%%)", name, got, want, 100*relTol)
	}
}

// plain builds a request without token ids (no prefix caching identity).
func plain(id int64, at float64, prompt, out int) Request {
	return Request{ID: id, Arrival: at, PromptLen: prompt, OutputLen: out}
}

// withIDs builds a request whose prompt ids are distinct from every other
// request's (salted by id) and whose answer has out tokens.
func withIDs(id int64, at float64, prompt []uint64, out int) Request {
	ids := append([]uint64(nil), prompt...)
	for i := 0; i < out; i++ {
		ids = append(ids, uint64(id)<<32|uint64(i)|1<<62)
	}
	return Request{ID: id, Arrival: at, IDs: ids, OutputLen: out}
}

func uniquePrompt(salt uint64, n int) []uint64 {
	p := make([]uint64, n)
	for i := range p {
		p[i] = salt<<32 | uint64(i)
	}
	return p
}

func TestCapacity(t *testing.T) {
	// (80 GiB × 0.9 − 13.48 GB) / (512 KiB × 16) = 63,829,411,328 / 8,388,608 = 7,609.0
	if got := KVBlocks(baseHW, baseModel, 0.9, 0, 16); got != 7609 {
		t.Errorf("KVBlocks = %d, want 7609", got)
	}
}

func TestHybridAttentionFootprint(t *testing.T) {
	// Gemma-style: 48 layers, 8 global, window 1024, 8 KV heads × 256, bf16.
	perLayer := 2.0 * 8 * 256 * 2 // K and V, bytes per token per layer
	c := Costs{GlobalKV: 8 * perLayer, LocalKV: 40 * perLayer, Window: 1024}
	got := c.KVBytes(18000) / 1e9
	// 8 × 8192 × 18000 + 40 × 8192 × 1024 = 1.180 + 0.336 GB
	near(t, "hybrid KV GB for 18,000 tokens", got, 1.5151, 0.001)
	full := Costs{GlobalKV: 48 * perLayer}
	near(t, "full-attention KV GB", full.KVBytes(18000)/1e9, 7.0779, 0.001)
	// In blocks, the window layers add ceil(40×8192×1024 / (65536×16)) = 320.
	core := New(Config{NumBlocks: 100000, BlockSize: 16, MaxNumBatchedTokens: 8192, MaxNumSeqs: 8, Costs: c})
	if got := core.BlocksFor(18000); got != 1125+320 {
		t.Errorf("BlocksFor(18000) = %d, want 1445", got)
	}
}

func TestStepCosts(t *testing.T) {
	c := NewCosts(baseHW, baseModel, Tuning{ComputeEff: 1, MemoryEff: 1})
	// One short request: memory bound on the weights, 13.48 GB / 3 TB/s.
	d := c.StepTime(Load{Tokens: 1, Seqs: 1, KVBytes: c.KVBytes(17)}).Duration
	near(t, "short decode step ms", d*1e3, 4.4963, 0.001)
	// 29 requests at 4,096 tokens: (13.48 + 29×4096×524288/1e9) GB / 3 TB/s.
	d = c.StepTime(Load{Tokens: 29, Seqs: 1, KVBytes: 29 * c.KVBytes(4096)}).Duration
	near(t, "29×4096 decode step ms", d*1e3, 25.254, 0.001)
	// Prefill chunks are compute bound: 2 × 6.74e9 × n / 989e12.
	sc := c.StepTime(Load{Tokens: 2048, Seqs: 1, KVBytes: c.KVBytes(2048)})
	d, comp, mem := sc.Duration, sc.Compute, sc.Memory
	near(t, "2048 prefill ms", d*1e3, 27.912, 0.001)
	if comp <= mem {
		t.Errorf("a 2048-token chunk should be compute bound (compute %.4f, memory %.4f)", comp, mem)
	}
	d = c.StepTime(Load{Tokens: 8192, Seqs: 1, KVBytes: c.KVBytes(8192)}).Duration
	near(t, "8192 prefill ms", d*1e3, 111.65, 0.001)
}

// TestDecodeTimeline runs one short request through the core and checks
// each step against the formula: the first step prefills 16 tokens, each
// later one decodes a token over a context that grows by one.
func TestDecodeTimeline(t *testing.T) {
	cfg := baseConfig(0, 8192, 256)
	c := cfg.Costs
	var steps []Step
	out := RunVirtual(cfg, []Request{plain(1, 0, 16, 5)}, func(s *Step) { steps = append(steps, *s) })
	if len(steps) != 5 || out[0].Tokens != 5 {
		t.Fatalf("%d steps, %d tokens; want 5 and 5", len(steps), out[0].Tokens)
	}
	want := 0.0
	for i, s := range steps {
		tokens, ctx := 1, 16+i
		if i == 0 {
			tokens = 16
		}
		d := c.StepTime(Load{Tokens: tokens, Seqs: 1, KVBytes: c.KVBytes(ctx)}).Duration
		want += d
		if s.End != want {
			t.Errorf("step %d ends at %.9f, want %.9f", i, s.End, want)
		}
	}
	if out[0].FirstToken != steps[0].End || out[0].LastToken != want {
		t.Errorf("outcome %+v does not match the steps", out[0])
	}
}

// TestLongPromptStallsDecoders: 16 short streams decode, then a 16,384-token
// prompt arrives. With a budget of 8,192 the decoders share the step with
// an 8,176-token chunk, so their gap grows to about one 8,192-token step,
// 111.6 ms; a budget of 2,048 cuts the stall to about 27.9 ms.
func TestLongPromptStallsDecoders(t *testing.T) {
	for _, tc := range []struct {
		budget int
		wantMs float64
	}{{8192, 111.65}, {2048, 27.91}} {
		cfg := baseConfig(0, tc.budget, 256)
		var reqs []Request
		for i := 0; i < 16; i++ {
			reqs = append(reqs, plain(int64(i), 0, 16, 200))
		}
		reqs = append(reqs, plain(100, 0.1, 16384, 4))
		maxStep := 0.0
		RunVirtual(cfg, reqs, func(s *Step) {
			if s.DecodeTokens >= 16 && s.PrefillTokens > 0 {
				maxStep = math.Max(maxStep, s.Duration)
			}
		})
		near(t, "stall with budget "+itoa(tc.budget)+" (ms)", maxStep*1e3, tc.wantMs, 0.01)
	}
}

func itoa(n int) string {
	b := []byte{}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// TestKVCacheLimitsAdmission: a cache of 300 blocks (4,800 tokens) holds
// two 2,000-token prompts with their answers (2,100 tokens = 132 blocks
// each), not the 64 that max_num_seqs allows, so most time to first token
// is spent waiting.
func TestKVCacheLimitsAdmission(t *testing.T) {
	cfg := baseConfig(300, 8192, 64)
	var reqs []Request
	for i := 0; i < 20; i++ {
		reqs = append(reqs, plain(int64(i), 0, 2000, 100))
	}
	maxRunning, kvFull := 0, 0
	core := New(cfg)
	for _, r := range reqs {
		core.Add(r)
	}
	now := 0.0
	ttft := map[int64]float64{}
	sched := map[int64]float64{}
	for !core.Idle() {
		st := core.Step(now)
		for _, s := range st.Admitted {
			if _, ok := sched[s.ID]; !ok {
				sched[s.ID] = s.ScheduledAt
			}
		}
		for _, e := range st.Emitted {
			if e.Index == 0 {
				ttft[e.Seq.ID] = st.End
			}
		}
		maxRunning = max(maxRunning, st.Running)
		if st.StopReason == StopKVFull {
			kvFull++
		}
		now = st.End
	}
	if maxRunning >= 20 || maxRunning > 4 {
		t.Errorf("max running = %d, want the cache (≈2–3 sequences), not max_num_seqs, to limit it", maxRunning)
	}
	if kvFull == 0 {
		t.Error("admission never stopped for a full KV cache")
	}
	var queueShare float64
	n := 0
	for id, first := range ttft {
		if first > 0 {
			queueShare += sched[id] / first
			n++
		}
	}
	if n != 20 {
		t.Fatalf("%d of 20 requests got a first token", n)
	}
	if queueShare/float64(n) < 0.5 {
		t.Errorf("mean queue share of TTFT = %.2f, want TTFT to be mostly queueing", queueShare/float64(n))
	}
}

// TestPreemptionCompletesEveryToken: 64 requests of 200-token prompts and
// 400-token answers need 38 blocks each at the end, 2,432 in all, from a
// cache of 1,000: they are admitted on their prompts and outgrow it.
func TestPreemptionCompletesEveryToken(t *testing.T) {
	cfg := baseConfig(1000, 8192, 256)
	var reqs []Request
	for i := 0; i < 64; i++ {
		reqs = append(reqs, withIDs(int64(i), 0, uniquePrompt(uint64(i)+1, 200), 400))
	}
	preemptions := 0
	out := RunVirtual(cfg, reqs, func(s *Step) { preemptions += len(s.Preempted) })
	if preemptions == 0 {
		t.Error("no preemption, though the batch outgrew the cache")
	}
	for _, o := range out {
		if o.Tokens != 400 {
			t.Fatalf("request %d got %d tokens, want 400", o.ID, o.Tokens)
		}
	}
	t.Logf("%d preemptions", preemptions)
}

// TestPrefixCacheAcrossTurns: turn 2 carries turn 1's prompt and answer,
// so it hits at least turn 1's prompt less one block. After unrelated
// traffic cycles through the whole cache, the hit is gone (LRU eviction).
func TestPrefixCacheAcrossTurns(t *testing.T) {
	cfg := baseConfig(200, 8192, 64)
	turn1 := withIDs(1, 0, uniquePrompt(7, 1000), 50)
	turn2IDs := append(append([]uint64(nil), turn1.IDs...), uniquePrompt(8, 30)...)
	turn2 := Request{ID: 2, Arrival: 5, IDs: append(turn2IDs, uniquePrompt(9, 20)...), OutputLen: 20}
	out := RunVirtual(cfg, []Request{turn1, turn2}, nil)
	if min := 1000 - 16; out[1].CachedTokens < min {
		t.Errorf("turn 2 cached %d tokens, want at least %d", out[1].CachedTokens, min)
	}
	// Same two turns with 12 unrelated 1,000-token requests in between.
	reqs := []Request{turn1}
	for i := 0; i < 12; i++ {
		reqs = append(reqs, withIDs(int64(10+i), 1+float64(i), uniquePrompt(uint64(100+i), 1000), 10))
	}
	turn2.Arrival = 20
	reqs = append(reqs, turn2)
	out = RunVirtual(cfg, reqs, nil)
	if got := out[len(out)-1].CachedTokens; got != 0 {
		t.Errorf("after the cache filled with other traffic, turn 2 still cached %d tokens", got)
	}
}

func TestPrefixCachingOff(t *testing.T) {
	cfg := baseConfig(200, 8192, 64)
	cfg.PrefixCaching = false
	turn1 := withIDs(1, 0, uniquePrompt(7, 500), 10)
	turn2 := Request{ID: 2, Arrival: 5, IDs: append(append([]uint64(nil), turn1.IDs...), 42, 43), OutputLen: 2}
	out := RunVirtual(cfg, []Request{turn1, turn2}, nil)
	if out[1].CachedTokens != 0 {
		t.Errorf("prefix caching off, but cached %d", out[1].CachedTokens)
	}
}

// TestEncoderCostOnce: a request's vision-encoder work is compute in the
// first step that schedules it, EncoderFLOPs / peak FLOPS on top of the
// same step without it, and in no later step.
func TestEncoderCostOnce(t *testing.T) {
	c := NewCosts(baseHW, baseModel, Tuning{ComputeEff: 1, MemoryEff: 1})
	run := func(flops float64) []float64 {
		core := New(Config{NumBlocks: 100000, BlockSize: 16, MaxNumBatchedTokens: 8192, MaxNumSeqs: 8, Costs: c})
		core.Add(Request{ID: 1, PromptLen: 4096, OutputLen: 3, EncoderFLOPs: flops})
		var computes []float64
		for now := 0.0; len(computes) < 3; {
			st := core.Step(now)
			computes = append(computes, st.Compute)
			now = st.End
		}
		return computes
	}
	plain, vision := run(0), run(500e12)
	near(t, "first step's extra compute s", vision[0]-plain[0], 500e12/c.FLOPS, 1e-9)
	for i := 1; i < 3; i++ {
		if vision[i] != plain[i] {
			t.Errorf("step %d: compute %g with the image, %g without: charged again", i, vision[i], plain[i])
		}
	}
}

// TestRunVirtualEndsOnARequestThatNeverFits: a request longer than the
// whole cache, arriving after two that fit, gets no token and ends the
// virtual run, rather than have it step through empty time for ever.
func TestRunVirtualEndsOnARequestThatNeverFits(t *testing.T) {
	cfg := baseConfig(10, 8192, 8) // 160 tokens of cache
	out := RunVirtual(cfg, []Request{plain(1, 0, 32, 4), plain(2, 0.5, 32, 4), plain(3, 5, 1000, 4)}, nil)
	if out[0].Tokens != 4 || out[1].Tokens != 4 || out[2].Tokens != 0 {
		t.Errorf("tokens %d, %d, %d: want 4 for the requests the cache holds, 0 for the one it cannot",
			out[0].Tokens, out[1].Tokens, out[2].Tokens)
	}
}

// TestHugeCacheCostsWhatARunTouches: a cache of a billion blocks (what a
// models file with a tiny KV per token asks for) is made as the run
// takes blocks, not all before it: 46 GB once went to bookkeeping up
// front, and a file asking for more than an int32 of blocks is refused.
func TestHugeCacheCostsWhatARunTouches(t *testing.T) {
	cfg := baseConfig(1_000_000_000, 8192, 8)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out := RunVirtual(cfg, []Request{plain(1, 0, 4000, 8), plain(2, 0.1, 4000, 8)}, nil)
	runtime.ReadMemStats(&after)
	if out[0].Tokens != 8 || out[1].Tokens != 8 {
		t.Fatalf("tokens %d, %d; want 8 each", out[0].Tokens, out[1].Tokens)
	}
	if mb := (after.TotalAlloc - before.TotalAlloc) >> 20; mb > 16 {
		t.Errorf("two requests on a billion-block cache allocated %d MB", mb)
	}
	cfg.NumBlocks = MaxBlocks + 1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "would hold 2147483647 blocks") {
		t.Errorf("a cache past an int32 of blocks: %v", err)
	}
}
