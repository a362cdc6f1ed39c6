package summary

import (
	"fmt"
	"time"

	"github.com/kneebench/knee/health"
	"github.com/kneebench/knee/results"
)

// gathered is what the shards hold, merged, and the measured span in
// seconds: what every part of a result is read from.
type gathered struct {
	lat  *latencies
	agg  aggregate
	tags map[int]*turnHists
	span float64
}

// result builds the run's result from the collected statistics, part by
// part.
func (s *Summary) result(rep health.Report, wStart, wEnd time.Duration, offered float64, warm int) *results.Run {
	var g gathered
	g.lat, g.agg, g.tags = s.coll.merged()
	// Throughput is over the whole measured phase: from the start of the
	// window to the end of its drain.
	g.span = (wEnd - wStart).Seconds()
	res := &results.Run{SchemaVersion: results.SchemaVersion, Config: s.level.Config, WindowSeconds: g.span}
	countsResult(res, &g, warm)
	s.arrivalsResult(res, &g, offered)
	healthResult(res, &g, rep)
	s.cacheResult(res, &g)
	if !s.level.NoHistograms {
		histogramsResult(res, &g)
	}
	s.featuresResult(res, &g)
	usageWarnings(res, &g.agg)
	s.coll.growth.warn(res)
	return res
}

// countsResult is the latencies, the requests and the tokens.
func countsResult(res *results.Run, g *gathered, warm int) {
	lat, agg := g.lat, &g.agg
	res.Stats = results.Stats{
		TTFT: summarize(lat.ttft, 1000), TTFTSched: summarize(lat.ttftSched, 1000),
		ITL: summarize(lat.itl, 1000), TPOT: summarize(lat.tpot, 1000),
		E2E: summarize(lat.e2e, 1000), E2ESched: summarize(lat.e2eSched, 1000),
		QueueWait: summarize(lat.queue, 1000),
	}
	errs := agg.errors
	if errs == nil {
		errs = map[string]int64{}
	}
	res.Requests = results.Requests{
		Sent: agg.sent, OK: agg.ok, Failed: agg.failed, Interrupted: agg.interrupted,
		Errors: errs, ErrorMessages: agg.errorText, Warmup: int64(warm), PartialTokens: agg.partial,
		FirstAttempt: agg.firstAttempt,
	}
	res.Tokens = results.Tokens{
		InputTotal: agg.inTotal, OutputTotal: agg.outTotal, CachedTotal: agg.cachedTotal,
		Input: results.SummarizeCounts(lat.in), Output: results.SummarizeCounts(lat.out),
		UsageReported: agg.usageReported, CachedReported: agg.cachedReported,
		MultiTokenChunks: agg.multiToken,
	}
	for _, k := range sortedTags(g.tags) {
		res.ByTurn = append(res.ByTurn, results.TurnStats{Turn: k, TTFT: summarize(g.tags[k].ttft, 1000), ITL: summarize(g.tags[k].itl, 1000)})
	}
}

// arrivalsResult is the throughput, and how the arrivals went out.
func (s *Summary) arrivalsResult(res *results.Run, g *gathered, offered float64) {
	agg := &g.agg
	if span := g.span; span > 0 {
		res.Throughput = results.Throughput{
			RequestsPerS:     float64(agg.ok) / span,
			OutputTokensPerS: float64(agg.outTotal) / span,
			TotalTokensPerS:  float64(agg.outTotal+agg.inTotal) / span,
			InputsPerS:       float64(agg.inputs) / span,
		}
		res.Arrivals.AchievedConcurrency = agg.busy.Seconds() / span
	}
	res.Arrivals.TargetRate = s.level.Load.Rate
	res.Arrivals.OfferedRate = offered
	if sendSpan := (agg.lastSent - agg.firstSent).Seconds(); agg.sent > 1 && sendSpan > 0 {
		// The rate at which the client actually put requests on the wire.
		res.Arrivals.AchievedRate = float64(agg.sent-1) / sendSpan
	}
	res.Arrivals.Waited = agg.waited
	res.Arrivals.LateSends = agg.late
	res.Arrivals.SendLatenessP50Ms = float64(g.lat.lateness.ValueAtPercentile(50)) / 1e3
	res.Arrivals.SendLatenessP99Ms = float64(g.lat.lateness.ValueAtPercentile(99)) / 1e3
}

// healthResult is the client's health: its own report, and its sends.
func healthResult(res *results.Run, g *gathered, rep health.Report) {
	agg := &g.agg
	lateP99 := time.Duration(g.lat.lateness.ValueAtPercentile(99)) * time.Microsecond
	verdict, reasons := health.Verdict(rep, health.Sends{Total: agg.sent, Late: agg.late, LatenessP99: lateP99})
	res.Health = results.Health{
		TimerLagP50Ms: float64(rep.TimerLagP50) / 1e6,
		TimerLagP99Ms: float64(rep.TimerLagP99) / 1e6,
		TimerLagMaxMs: float64(rep.TimerLagMax) / 1e6,
		CPUPercent:    100 * rep.CPUShare,
		CPUSeconds:    rep.CPU.Seconds(),
		GCPauseMs:     float64(rep.GCPause) / 1e6,
		NumGC:         uint32(rep.NumGC),
		Verdict:       verdict,
		Reasons:       reasons,
	}
	if tokens := agg.outTotal + agg.partial; tokens > 0 {
		res.Health.CPUPerTokenUs = rep.CPU.Seconds() * 1e6 / float64(tokens)
	}
}

// cacheResult is the prefix cache: the hit rate reported, and the one
// expected from the prompts' shared prefixes.
func (s *Summary) cacheResult(res *results.Run, g *gathered) {
	agg := &g.agg
	if agg.cachedReported && agg.inTotal > 0 {
		res.Cache = &results.Cache{Reported: true, HitRate: float64(agg.cachedTotal) / float64(agg.inTotal)}
	}
	if s.coll.prefixes == nil || agg.inTotal == 0 {
		return
	}
	if res.Cache == nil {
		res.Cache = &results.Cache{}
	}
	expected := agg.expectedCached / float64(agg.inTotal)
	res.Cache.Expected = &expected
	res.Warnings = append(res.Warnings, cacheWarnings(*res.Cache, res.Tokens.Input.Mean, s.level.TemplateTokens, s.coll.prefixes.Full())...)
}

// histogramsResult is the histograms a merge rebuilds the run from.
func histogramsResult(res *results.Run, g *gathered) {
	lat := g.lat
	res.Histograms = results.Histograms{
		"ttft_us": encodeHist(lat.ttft), "ttft_sched_us": encodeHist(lat.ttftSched),
		"itl_us": encodeHist(lat.itl), "tpot_us": encodeHist(lat.tpot),
		"e2e_us": encodeHist(lat.e2e), "e2e_sched_us": encodeHist(lat.e2eSched),
		"queue_wait_us": encodeHist(lat.queue), "send_lateness_us": encodeHist(lat.lateness),
		"input_tokens": encodeHist(lat.in), "output_tokens": encodeHist(lat.out),
	}
	// What knee merge rebuilds the per-turn table and the server's
	// per-response timings from.
	for _, k := range sortedTags(g.tags) {
		res.Histograms[results.TurnHistogram(k, "ttft")] = encodeHist(g.tags[k].ttft)
		res.Histograms[results.TurnHistogram(k, "itl")] = encodeHist(g.tags[k].itl)
	}
	if g.agg.timings > 0 {
		res.Histograms[results.ServerPromptHistogram] = encodeHist(lat.srvPrompt)
		res.Histograms[results.ServerTPOTHistogram] = encodeHist(lat.srvTPOT)
	}
}

// featuresResult is what the features seen add: reasoning, images, tool
// calls, goodput, llama.cpp's timings.
func (s *Summary) featuresResult(res *results.Run, g *gathered) {
	agg := &g.agg
	thinkResult(res, g.lat, agg.think, s.level.Config.MaxTokens, !s.level.NoHistograms)
	if agg.images.Requests > 0 {
		im := agg.images
		im.Derive()
		res.Images = &im
	}
	if agg.tools.Requests > 0 {
		tools := agg.tools
		res.ToolCalls = &tools
	}
	res.Goodput = goodputResult(s.coll.goodput, agg.good, agg.ok+agg.failed, g.span)
	if agg.timings > 0 {
		res.ServerTimings = &results.ServerTimings{Requests: agg.timings, PromptMs: summarize(g.lat.srvPrompt, 1000), TPOT: summarize(g.lat.srvTPOT, 1000)}
	}
	if agg.cachedFromTimings {
		res.Notes = append(res.Notes, "cached tokens come from llama.cpp's timings.cache_n (the server sent no usage.prompt_tokens_details)")
	}
}

// usageWarnings says what in the server's usage was not believed, or
// was missing, each count out of the answers that succeeded.
func usageWarnings(res *results.Run, agg *aggregate) {
	warn := func(n int64, format string, args ...any) {
		if n > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%d of %d ", n, agg.ok)+fmt.Sprintf(format, args...))
		}
	}
	warn(agg.noDone, "streams closed after their finish_reason without data: [DONE]: counted as finished, since the answer said it was over")
	warn(agg.oddPrompt, "responses reported a usage.prompt_tokens no request has (the server wrote %s): not believed, "+
		"those prompts count as 0 tokens", agg.oddPromptValue)
	warn(agg.oddUsage, "responses reported a usage.completion_tokens that cannot be right (negative, not a number, "+
		"or above the max_tokens asked): their chunk counts were used")
	warn(agg.eosHonoured, "answers ended before their max_tokens though ignore_eos was sent: the server did not honour it "+
		"here (llama-server's /v1/messages drops it), so output lengths are the model's, not the workload's")
	warn(agg.multiToken, "responses packed several tokens into one chunk: ITL is per chunk, and token counts come from usage")
	if !agg.usageReported && agg.ok > 0 {
		res.Warnings = append(res.Warnings, "the server reported no usage: token counts are chunk counts")
	}
	if agg.clamped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("latencies over one hour were clamped to it: %d", agg.clamped))
	}
}
