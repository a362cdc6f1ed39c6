package results

import (
	"fmt"
	"math"
)

// Merging the shards' counts, rates, health and calls.

// mergeCounts sums what is counted.
func mergeCounts(m *Run, shards []*Run) {
	m.Requests.Errors = map[string]int64{}
	m.Tokens.UsageReported, m.Tokens.CachedReported = true, true
	cache, cached := &Cache{Reported: true}, false
	var good, finished int64
	for _, r := range shards {
		m.Requests.add(r.Requests)
		m.Tokens.add(r.Tokens)
		m.Arrivals.Waited += r.Arrivals.Waited
		m.Arrivals.Unsent += r.Arrivals.Unsent
		m.Arrivals.LateSends += r.Arrivals.LateSends
		m.Arrivals.WindowArrivals += r.Arrivals.WindowArrivals
		if c := r.Cache; c != nil {
			cached = true
			cache.Reported = cache.Reported && c.Reported
			cache.ColdTurns += c.ColdTurns
			cache.Turns += c.Turns
		}
		if c := r.Connections; c != nil {
			if m.Connections == nil {
				m.Connections = &Connections{}
			}
			m.Connections.Opened += c.Opened
			m.Connections.StaleClosed += c.StaleClosed
			m.Connections.Resent += c.Resent
		}
		if g := r.Goodput; g != nil {
			good, finished = good+g.Good, finished+g.Finished
			if m.Goodput == nil {
				m.Goodput = &Goodput{Bounds: g.Bounds}
			}
		}
	}
	if cached {
		if m.Tokens.InputTotal > 0 {
			cache.HitRate = float64(m.Tokens.CachedTotal) / float64(m.Tokens.InputTotal)
		}
		if cache.Turns > 0 {
			cache.ColdShare = float64(cache.ColdTurns) / float64(cache.Turns)
		}
		m.Cache = cache
	}
	if m.Goodput != nil {
		m.Goodput.Good, m.Goodput.Finished = good, finished
		if finished > 0 {
			m.Goodput.Share = float64(good) / float64(finished)
		}
		if m.WindowSeconds > 0 {
			m.Goodput.RequestsPerS = float64(good) / m.WindowSeconds
		}
	}
}

// add sums a shard's request counts, errors and first attempts into q.
func (q *Requests) add(s Requests) {
	q.Sent += s.Sent
	q.OK += s.OK
	q.Failed += s.Failed
	q.Interrupted += s.Interrupted
	q.Warmup += s.Warmup
	q.Ramp += s.Ramp
	q.RampRunning += s.RampRunning
	q.PartialTokens += s.PartialTokens
	for k, v := range s.Errors {
		q.Errors[k] += v
	}
	for k, v := range s.ErrorMessages {
		if q.ErrorMessages == nil {
			q.ErrorMessages = map[string]string{}
		}
		if q.ErrorMessages[k] == "" {
			q.ErrorMessages[k] = v
		}
	}
	if a := s.FirstAttempt; a != nil {
		if q.FirstAttempt == nil {
			q.FirstAttempt = &Attempts{Errors: map[string]int64{}}
		}
		f := q.FirstAttempt
		f.OK, f.Failed, f.Retries = f.OK+a.OK, f.Failed+a.Failed, f.Retries+a.Retries
		for k, v := range a.Errors {
			f.Errors[k] += v
		}
	}
}

// add sums a shard's token totals into t; a total is reported when every
// shard's is.
func (t *Tokens) add(s Tokens) {
	t.InputTotal += s.InputTotal
	t.OutputTotal += s.OutputTotal
	t.CachedTotal += s.CachedTotal
	t.MultiTokenChunks += s.MultiTokenChunks
	t.UsageReported = t.UsageReported && s.UsageReported
	t.CachedReported = t.CachedReported && s.CachedReported
}

// mergeRates recomputes the rates over the merged window.
func mergeRates(m *Run, shards []*Run) {
	span := m.WindowSeconds
	first := shards[0]
	// Every shard drew the one schedule: its target and offered rates are
	// the whole load's.
	m.Arrivals.TargetRate, m.Arrivals.OfferedRate = first.Arrivals.TargetRate, first.Arrivals.OfferedRate
	var busy, completion, completionWeight, inputs float64
	for _, r := range shards {
		m.Arrivals.AchievedRate += r.Arrivals.AchievedRate
		inputs += r.Throughput.InputsPerS * r.WindowSeconds
		busy += r.Arrivals.AchievedConcurrency * r.WindowSeconds
		if w := float64(r.Arrivals.WindowArrivals); r.Arrivals.CompletionRate > 0 && w > 0 {
			completion += r.Arrivals.CompletionRate * w
			completionWeight += w
		}
	}
	if completionWeight > 0 {
		m.Arrivals.CompletionRate = completion / completionWeight
	}
	if span > 0 {
		m.Throughput = Throughput{
			RequestsPerS:     float64(m.Requests.OK) / span,
			OutputTokensPerS: float64(m.Tokens.OutputTotal) / span,
			TotalTokensPerS:  float64(m.Tokens.OutputTotal+m.Tokens.InputTotal) / span,
			InputsPerS:       math.Round(inputs) / span,
		}
		m.Arrivals.AchievedConcurrency = busy / span
	}
}

// mergeHealth takes the worst shard's health and names it.
func mergeHealth(m *Run, shards []*Run, part string, first int) {
	rank := map[string]int{VerdictVirtual: 0, VerdictHealthy: 1, VerdictNoisy: 2, VerdictClientLimited: 3, VerdictHostStarved: 3}
	worst := 0
	for i, r := range shards {
		if rank[r.Health.Verdict] > rank[shards[worst].Health.Verdict] {
			worst = i
		}
	}
	m.Health = shards[worst].Health
	m.Health.Reasons = nil
	for _, reason := range shards[worst].Health.Reasons {
		m.Health.Reasons = append(m.Health.Reasons, fmt.Sprintf("%s %d: %s", part, first+worst, reason))
	}
	m.Notes = append(m.Notes, fmt.Sprintf("client health is %s %d's, the worst of the %d (%s)", part, first+worst, len(shards), m.Health.Verdict))
}

// mergeCalls joins the call-level view of the voice workload.
func mergeCalls(m *Run, shards []*Run) {
	var callSeconds float64
	for _, r := range shards {
		c := r.Calls
		if c == nil {
			continue
		}
		if m.Calls == nil {
			m.Calls = &Calls{TurnsOfferedPerS: c.TurnsOfferedPerS}
		}
		m.Calls.Started += c.Started
		m.Calls.Completed += c.Completed
		m.Calls.Shed += c.Shed
		m.Calls.AchievedConcurrency += c.AchievedConcurrency
		m.Calls.LittlesLaw += c.LittlesLaw
		callSeconds += c.MeanCallSeconds * float64(c.Completed)
	}
	if m.Calls == nil {
		return
	}
	if m.Calls.Completed > 0 {
		m.Calls.MeanCallSeconds = callSeconds / float64(m.Calls.Completed)
	}
	if m.WindowSeconds > 0 {
		m.Calls.TurnsPerS = float64(m.Requests.OK) / m.WindowSeconds
	}
}
