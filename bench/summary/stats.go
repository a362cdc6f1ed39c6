package summary

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// histMaxMicros is the largest latency a histogram holds: one hour. Longer
// values are clamped and counted.
const histMaxMicros = 3_600_000_000

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, histMaxMicros, 3) }

// latencies is one set of the run's latency histograms, in microseconds.
type latencies struct {
	ttft, ttftSched, itl, tpot, e2e, e2eSched, queue, lateness *hdrhistogram.Histogram
	in, out                                                    *hdrhistogram.Histogram
	// srvPrompt and srvTPOT are llama.cpp's timings (µs): prompt time
	// and generation time per token after the first.
	srvPrompt, srvTPOT *hdrhistogram.Histogram
	// ttfat and ttfatSched are the time to the first answer token; think
	// is made when a request first reasons (reasoning.go).
	ttfat, ttfatSched *hdrhistogram.Histogram
	think             *thinkHists
}

func newLatencies() *latencies {
	return &latencies{
		ttft: newHist(), ttftSched: newHist(), itl: newHist(), tpot: newHist(),
		e2e: newHist(), e2eSched: newHist(), queue: newHist(), lateness: newHist(),
		in: hdrhistogram.New(1, 100_000_000, 3), out: hdrhistogram.New(1, 100_000_000, 3),
		srvPrompt: newHist(), srvTPOT: newHist(),
		ttfat: newHist(), ttfatSched: newHist(),
	}
}

func (l *latencies) merge(o *latencies) {
	l.ttfat.Merge(o.ttfat)
	l.ttfatSched.Merge(o.ttfatSched)
	l.mergeThink(o)
	l.ttft.Merge(o.ttft)
	l.ttftSched.Merge(o.ttftSched)
	l.itl.Merge(o.itl)
	l.tpot.Merge(o.tpot)
	l.e2e.Merge(o.e2e)
	l.e2eSched.Merge(o.e2eSched)
	l.queue.Merge(o.queue)
	l.lateness.Merge(o.lateness)
	l.in.Merge(o.in)
	l.out.Merge(o.out)
	l.srvPrompt.Merge(o.srvPrompt)
	l.srvTPOT.Merge(o.srvTPOT)
}

// turnHists breaks TTFT and ITL down by a request's tag (turn of a call).
type turnHists struct{ ttft, itl *hdrhistogram.Histogram }

// shard is one lock's worth of aggregates. Requests are spread over shards
// so that recording never contends on one lock, and memory stays fixed
// however long the run.
type shard struct {
	mu  sync.Mutex
	lat *latencies
	agg aggregate
	tag map[int]*turnHists
	// ticks count arrivals and completions by the tenth of a second, for
	// the window's slices.
	ticks tickCounts
}

// aggregate holds the counters of a run.
type aggregate struct {
	sent, ok, failed, interrupted, waited, late int64
	errors                                      map[string]int64
	// errorText is the server's words for each error class: the first
	// message given.
	errorText                               map[string]string
	inTotal, outTotal, cachedTotal, partial int64
	// expectedCached sums, over successful requests, the prompt tokens an
	// earlier request of the run had already sent (see workload.PrefixTracker).
	expectedCached                float64
	usageReported, cachedReported bool
	multiToken                    int64
	firstSched, lastDone          time.Duration
	firstSent, lastSent           time.Duration
	busy                          time.Duration
	clamped                       int64
	coldTurns, measuredTurns      int64
	firstAttempt                  *results.Attempts
	done                          completionSample
	timings                       int64
	oddUsage                      int64
	// eosHonoured counts answers that asked to ignore EOS and ended
	// before their max_tokens all the same.
	eosHonoured       int64
	oddPrompt         int64
	noDone            int64
	oddPromptValue    string
	good              int64
	cachedFromTimings bool
	think             thinkCounts
	tools             results.ToolCalls
	// inputs counts a pooling endpoint's inputs (embeddings).
	inputs int64
	images results.Images
}

func (a *aggregate) add(o *aggregate) {
	a.sent += o.sent
	a.ok += o.ok
	a.failed += o.failed
	a.interrupted += o.interrupted
	a.waited += o.waited
	a.late += o.late
	for k, v := range o.errors {
		if a.errors == nil {
			a.errors = map[string]int64{}
		}
		a.errors[k] += v
	}
	for k, v := range o.errorText {
		a.noteError(k, v)
	}
	a.inTotal += o.inTotal
	a.outTotal += o.outTotal
	a.cachedTotal += o.cachedTotal
	a.expectedCached += o.expectedCached
	a.partial += o.partial
	a.usageReported = a.usageReported || o.usageReported
	a.cachedReported = a.cachedReported || o.cachedReported
	a.multiToken += o.multiToken
	a.addSpan(o)
	a.busy += o.busy
	a.clamped += o.clamped
	a.done.merge(&o.done)
	a.timings += o.timings
	a.oddUsage += o.oddUsage
	a.eosHonoured += o.eosHonoured
	a.oddPrompt += o.oddPrompt
	a.noDone += o.noDone
	a.think.add(o.think)
	a.inputs += o.inputs
	sumImages(&a.images, o.images)
	a.tools.Requests += o.tools.Requests
	a.tools.FinishToolCalls += o.tools.FinishToolCalls
	a.tools.ArgumentChunks += o.tools.ArgumentChunks
	if a.oddPromptValue == "" {
		a.oddPromptValue = o.oddPromptValue
	}
	a.good += o.good
	a.cachedFromTimings = a.cachedFromTimings || o.cachedFromTimings
	a.coldTurns += o.coldTurns
	a.measuredTurns += o.measuredTurns
	if o.firstAttempt != nil {
		if a.firstAttempt == nil {
			a.firstAttempt = &results.Attempts{Errors: map[string]int64{}}
		}
		a.firstAttempt.OK += o.firstAttempt.OK
		a.firstAttempt.Failed += o.firstAttempt.Failed
		a.firstAttempt.Retries += o.firstAttempt.Retries
		for k, v := range o.firstAttempt.Errors {
			a.firstAttempt.Errors[k] += v
		}
	}
}

// addSpan widens a's span of sends and completions to o's (o's sent
// counted into a already).
func (a *aggregate) addSpan(o *aggregate) {
	if o.sent == 0 {
		return
	}
	if a.sent == o.sent || o.firstSched < a.firstSched {
		a.firstSched = o.firstSched
	}
	if a.sent == o.sent || o.firstSent < a.firstSent {
		a.firstSent = o.firstSent
	}
	if o.lastDone > a.lastDone {
		a.lastDone = o.lastDone
	}
	if o.lastSent > a.lastSent {
		a.lastSent = o.lastSent
	}
}

// sumImages sums o's image figures into a.
func sumImages(a *results.Images, o results.Images) {
	a.Requests += o.Requests
	a.Images += o.Images
	a.ImageBytes += o.ImageBytes
	a.BodyBytes += o.BodyBytes
	a.PromptTokens += o.PromptTokens
	a.Uploads += o.Uploads
	a.UploadNs += o.UploadNs
	a.TTFTSchedNs += o.TTFTSchedNs
	a.UploadMaxNs = max(a.UploadMaxNs, o.UploadMaxNs)
}

// collector aggregates measured records.
type collector struct {
	shards []*shard
	// origin is the window's start, which the slices' tick grid counts
	// from, so that a slice's bounds are the window's own to the tick.
	origin atomic.Int64
	// coldThreshold, when positive, counts a measured request as cold
	// when it cached fewer tokens than this.
	coldThreshold int
	// callOrigins says that a record's age is counted from its call's
	// arrival (record.Record.Origin) rather than from its own schedule.
	callOrigins bool
	// goodput are the per-request bounds of good requests.
	goodput Goodput
	// prefixes, when set, says what share of each measured prompt earlier
	// ones sent (see workload.PrefixTracker); the result then states the cache hit
	// the workload expects beside the one the server reports.
	prefixes *workload.PrefixTracker
	// growth watches calls' later turns carry their history.
	growth turnGrowth
}

func newCollector(n int) *collector {
	c := &collector{shards: make([]*shard, n)}
	for i := range c.shards {
		c.shards[i] = &shard{lat: newLatencies(), tag: map[int]*turnHists{}}
	}
	return c
}

func (s *shard) record(h *hdrhistogram.Histogram, d time.Duration) {
	v := d.Microseconds()
	if v < 0 {
		v = 0
	}
	if v > histMaxMicros {
		v = histMaxMicros
		s.agg.clamped++
	}
	_ = h.RecordValue(v)
}

// merged returns the union of every shard.
func (c *collector) merged() (*latencies, aggregate, map[int]*turnHists) {
	lat := newLatencies()
	var agg aggregate
	tags := map[int]*turnHists{}
	for _, s := range c.shards {
		s.mu.Lock()
		lat.merge(s.lat)
		agg.add(&s.agg)
		for k, v := range s.tag {
			t := tags[k]
			if t == nil {
				t = &turnHists{ttft: newHist(), itl: newHist()}
				tags[k] = t
			}
			t.ttft.Merge(v.ttft)
			t.itl.Merge(v.itl)
		}
		s.mu.Unlock()
	}
	return lat, agg, tags
}

// live merges the shards' histograms into into's (those it has), emptied
// first, in one pass.
func (c *collector) live(into *Live) {
	type pair struct {
		to   *hdrhistogram.Histogram
		from func(*latencies) *hdrhistogram.Histogram
	}
	var pairs []pair
	for _, p := range []pair{
		{into.TTFTSched, func(l *latencies) *hdrhistogram.Histogram { return l.ttftSched }},
		{into.ITL, func(l *latencies) *hdrhistogram.Histogram { return l.itl }},
		{into.Lateness, func(l *latencies) *hdrhistogram.Histogram { return l.lateness }},
	} {
		if p.to != nil {
			p.to.Reset()
			pairs = append(pairs, p)
		}
	}
	for _, s := range c.shards {
		s.mu.Lock()
		for _, p := range pairs {
			p.to.Merge(p.from(s.lat))
		}
		s.mu.Unlock()
	}
}

// summarize and encodeHist are results' own, so a merge of shard files
// summarises exactly as a run does.
func summarize(h *hdrhistogram.Histogram, scale float64) results.Summary {
	return results.SummarizeHistogram(h, scale)
}

func encodeHist(h *hdrhistogram.Histogram) string { return results.EncodeHistogram(h) }

func sortedTags(m map[int]*turnHists) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

// maxErrorText bounds the server's words kept for an error class.
const maxErrorText = 300

// noteError keeps the first message given for an error class.
func (a *aggregate) noteError(class, text string) {
	if text == "" || a.errorText[class] != "" {
		return
	}
	if a.errorText == nil {
		a.errorText = map[string]string{}
	}
	if len(text) > maxErrorText {
		text = strings.ToValidUTF8(text[:maxErrorText], "") + "…"
	}
	a.errorText[class] = text
}
