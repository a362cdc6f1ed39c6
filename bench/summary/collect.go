package summary

import (
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/results"
)

// piece is what one feature reads of a successful request into its
// shard: the summariser's features are a list of pieces, not blocks of
// one function.
type piece func(c *collector, s *shard, r *record.Record)

// pieces are every successful request's, in order.
var pieces = []piece{
	(*collector).addCompletion,
	func(c *collector, _ *shard, r *record.Record) { c.growth.add(r) },
	addImages,
	addTokens,
	addServerTimings,
	addLatencies,
}

// streamPieces are a streamed answer's, once it has a first token.
var streamPieces = []piece{
	addStreamLatencies,
	func(_ *collector, s *shard, r *record.Record) { s.addThink(&s.agg, r) },
	addTools,
	addGaps,
}

// add records one finished measured request.
func (c *collector) add(r *record.Record) {
	s := c.shards[r.Index%len(c.shards)]
	s.mu.Lock()
	defer s.mu.Unlock()
	addSend(s, r)
	if c.addFailure(s, r) {
		return
	}
	for _, p := range pieces {
		p(c, s, r)
	}
	if r.Chunks == 0 || r.Pooled {
		// A pooled answer is one body, no tokens streamed: E2E is its
		// latency, and a first token would only repeat it.
		return
	}
	for _, p := range streamPieces {
		p(c, s, r)
	}
}

// addSend is when the request was scheduled and sent, and its attempts.
func addSend(s *shard, r *record.Record) {
	a := &s.agg
	if a.sent == 0 || r.Scheduled < a.firstSched {
		a.firstSched = r.Scheduled
	}
	if a.sent == 0 || r.Sent < a.firstSent {
		a.firstSent = r.Sent
	}
	a.lastSent = max(a.lastSent, r.Sent)
	a.sent++
	a.lastDone = max(a.lastDone, r.Done)
	if r.Waited {
		a.waited++
	}
	if r.Lateness > time.Millisecond {
		a.late++
	}
	s.record(s.lat.lateness, r.Lateness)
	if r.Attempts == 0 {
		return
	}
	if a.firstAttempt == nil {
		a.firstAttempt = &results.Attempts{Errors: map[string]int64{}}
	}
	if r.FirstClass == "" {
		a.firstAttempt.OK++
	} else {
		a.firstAttempt.Failed++
		a.firstAttempt.Errors[r.FirstClass]++
	}
	a.firstAttempt.Retries += int64(r.Attempts - 1)
}

// addFailure counts a request that failed or was interrupted, and says
// whether it did.
func (c *collector) addFailure(s *shard, r *record.Record) bool {
	a := &s.agg
	switch {
	case r.Class == record.ClassInterrupted:
		s.ticks.sent(r.Scheduled-c.gridOrigin(), false)
		a.interrupted++
	case r.Class != "":
		s.ticks.sent(r.Scheduled-c.gridOrigin(), true)
		a.failed++
		if a.errors == nil {
			a.errors = map[string]int64{}
		}
		a.errors[r.Class]++
		a.noteError(r.Class, r.Message)
	default:
		return false
	}
	a.partial += int64(r.Chunks)
	return true
}

// addCompletion is a success: goodput, busy time, its place among the
// completions and the time slices.
func (c *collector) addCompletion(s *shard, r *record.Record) {
	a := &s.agg
	s.ticks.sent(r.Scheduled-c.gridOrigin(), false)
	a.ok++
	if c.goodput.Set() && c.goodput.good(r) {
		a.good++
	}
	a.busy += r.Done - r.Sent
	origin, done := r.Scheduled, r.Done
	if c.callOrigins {
		// The caller's pauses taken out: a turn's age is then the time
		// the server took over the call's turns so far, and a call that
		// keeps up finishes each turn number at about one age.
		origin, done = r.Origin, r.Done-r.Paused
	}
	out := r.OutputTokens()
	a.done.add(completion{tag: int32(r.Tag), doneMs: int32(done.Milliseconds()), ageMs: int32((done - origin).Milliseconds()),
		ttftUs: sliceMicros(r.FirstToken-r.Scheduled, r.FirstToken > 0),
		tpotUs: sliceMicros((r.LastToken-r.FirstToken)/time.Duration(max(out-1, 1)), out > 1 && r.FirstToken > 0)})
	s.ticks.completed(r.Done-c.gridOrigin(), int64(out))
	a.inputs += int64(r.Inputs)
	if c.coldThreshold > 0 {
		a.measuredTurns++
		if r.CachedTokens < c.coldThreshold {
			a.coldTurns++
		}
	}
}

// addImages is what a request's images cost to send.
func addImages(_ *collector, s *shard, r *record.Record) {
	if r.Images == 0 {
		return
	}
	im := &s.agg.images
	im.Requests++
	im.Images += int64(r.Images)
	im.ImageBytes += int64(r.ImageBytes)
	im.BodyBytes += int64(r.BodyBytes)
	im.PromptTokens += int64(r.PromptTokens)
	if r.Chunks > 0 {
		im.Uploads++
		im.UploadNs += int64(r.Upload)
		im.TTFTSchedNs += int64(r.FirstToken - r.Scheduled)
		im.UploadMaxNs = max(im.UploadMaxNs, int64(r.Upload))
	}
}

// addTokens is what the usage said: totals, the cache, and what looked
// odd in it.
func addTokens(_ *collector, s *shard, r *record.Record) {
	a := &s.agg
	out := r.OutputTokens()
	a.inTotal += int64(r.PromptTokens)
	a.outTotal += int64(out)
	a.cachedTotal += int64(r.CachedTokens)
	a.expectedCached += float64(r.PromptTokens) * float64(r.PrefixShare)
	a.usageReported = a.usageReported || r.UsageReported
	a.cachedReported = a.cachedReported || r.CachedReported
	if r.NoDone {
		a.noDone++
	}
	if r.PromptOdd != "" {
		a.oddPrompt++
		if a.oddPromptValue == "" {
			a.oddPromptValue = r.PromptOdd
		}
	}
	if r.IgnoreEOS && !r.Pooled && r.MaxTokens > 0 && out < r.MaxTokens && !r.FinishLength && !r.CalledTool() {
		a.eosHonoured++
	}
	if r.UsageReported && r.UsageImplausible() {
		a.oddUsage++
	} else if r.UsageReported && r.CompletionTokens > r.Chunks {
		a.multiToken++
	}
	if r.PromptTokens > 0 {
		_ = s.lat.in.RecordValue(int64(r.PromptTokens))
	}
	if out > 0 {
		_ = s.lat.out.RecordValue(int64(out))
	}
}

// addServerTimings is what llama.cpp's timings said of the request.
func addServerTimings(_ *collector, s *shard, r *record.Record) {
	tm := r.Timings
	if tm == nil {
		return
	}
	a := &s.agg
	a.timings++
	a.cachedFromTimings = a.cachedFromTimings || r.CachedFromTimings
	s.record(s.lat.srvPrompt, time.Duration(tm.PromptMs*float64(time.Millisecond)))
	if tm.PredictedN > 1 {
		s.record(s.lat.srvTPOT, time.Duration(tm.PredictedMs*float64(time.Millisecond)/float64(tm.PredictedN-1)))
	}
}

// addLatencies is every answer's: its wait to be sent, and its end.
func addLatencies(_ *collector, s *shard, r *record.Record) {
	s.record(s.lat.queue, r.Sent-r.Scheduled)
	if r.Chunks > 0 {
		s.record(s.lat.e2eSched, r.LastToken-r.Scheduled)
		s.record(s.lat.e2e, r.LastToken-r.Sent)
	}
}

// addStreamLatencies is a stream's first token and time per token.
func addStreamLatencies(_ *collector, s *shard, r *record.Record) {
	s.record(s.lat.ttft, r.FirstToken-r.Sent)
	s.record(s.lat.ttftSched, r.FirstToken-r.Scheduled)
	if out := r.OutputTokens(); out > 1 {
		s.record(s.lat.tpot, (r.LastToken-r.FirstToken)/time.Duration(out-1))
	}
}

// addTools is a request that called a tool.
func addTools(_ *collector, s *shard, r *record.Record) {
	if !r.CalledTool() {
		return
	}
	t := &s.agg.tools
	t.Requests++
	t.ArgumentChunks += int64(r.ToolChunks)
	if r.ToolFinish {
		t.FinishToolCalls++
	}
}

// addGaps is the gaps between a stream's chunks (ITL), and a tagged
// turn's own TTFT and ITL.
func addGaps(_ *collector, s *shard, r *record.Record) {
	var th *turnHists
	if r.Tag != 0 {
		th = s.tag[r.Tag]
		if th == nil {
			th = &turnHists{ttft: newHist(), itl: newHist()}
			s.tag[r.Tag] = th
		}
		s.record(th.ttft, r.FirstToken-r.Scheduled)
	}
	for i := 1; i < len(r.ChunkTimes); i++ {
		gap := r.ChunkTimes[i] - r.ChunkTimes[i-1]
		s.record(s.lat.itl, gap)
		if th != nil {
			s.record(th.itl, gap)
		}
	}
}
