package bench

import (
	"fmt"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// RepeatSeed is the seed repeat rep (from 0) of a level draws its
// schedule and prompt lengths from: the series' own for the first, and
// past it the series' seed and rep scrambled (splitmix64's finaliser).
// Seeds next to each other (s, s+1…) draw correlated schedules from the
// generators' seeding, so repeats seeded so would agree more than
// independent windows do, and their intervals would be too narrow.
func (s *Series) RepeatSeed(rep int) uint64 {
	if rep == 0 {
		return s.Load.Seed
	}
	return ScrambleSeed(s.Load.Seed ^ uint64(rep)<<40)
}

// ScrambleSeed maps a seed to one that shares no structure with its
// neighbours' (splitmix64's finaliser).
func ScrambleSeed(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// repeatNonce is repeat rep's nonce for level i: repeat 0 keeps the
// level's own, and every other repeat has prompts of its own, so that
// no repeat finds another's prefixes cached.
func (s *Series) repeatNonce(i, rep int) string {
	if rep == 0 {
		return s.LevelNonce(i)
	}
	return fmt.Sprintf("[%s.%d.r%d]", s.Nonce, i+1, rep+1)
}

// RepeatLevel is Level measured again: repeat rep (from 0; repeat 0 is
// Level itself) draws from its own seed (RepeatSeed) and sends prompts
// of its own.
func (s *Series) RepeatLevel(rep, i int, p Prober, rate float64, concurrency int, cfg results.Config) (*Level, error) {
	if err := s.Size(p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lv := &Level{Index: i, Load: rate, Goodput: s.Goodput, Slice: s.Slice, TemplateTokens: s.templateTokens()}
	if concurrency > 0 {
		lv.Load = float64(concurrency)
	}
	f := &finisher{s: s, notes: s.notes, served: -1}
	if is := s.Workload.imageServer; is != nil {
		f.served = is.count(0)
	}
	lv.finish = f.finish
	if s.Workload.calls() {
		s.callLevel(lv, f, rep, i, rate, concurrency, cfg)
		return lv, nil
	}
	s.requestLevel(lv, f, rep, i, rate, concurrency, cfg)
	return lv, nil
}

// callLevel makes lv a level of calls: conversations or voice, arriving
// at rate, or (conversations) closed loop, concurrency at once.
func (s *Series) callLevel(lv *Level, f *finisher, rep, i int, rate float64, concurrency int, cfg results.Config) {
	w := s.Workload
	load := driver.CallLoad{Rate: rate, Concurrency: concurrency, Calls: w.Calls, Duration: s.Load.Duration, MaxConcurrentCalls: w.MaxConcurrentCalls,
		Seed: s.RepeatSeed(rep), DrainTimeout: s.Load.DrainTimeout, Shard: s.Load.Shard}
	if concurrency > 0 {
		load.Rate = 0
	}
	var src workload.Calls
	if w.Conversations {
		f.calls = &trackedCalls{Conversations: s.convs, images: w.Dataset.images}
		if !w.Dataset.Repeat {
			f.calls.Offset = s.next
		}
		recordConversations(&cfg, s, load, f.calls.Offset)
		src = f.calls
	} else {
		v := *w.Voice
		v.WordsPerToken = s.cal.WordsPerToken
		v.Nonce = s.repeatNonce(i, rep)
		RecordVoice(&cfg, v, load)
		src = v
	}
	lv.Work, lv.Config = Calls{Source: src, Load: load}, cfg
}

// requestLevel makes lv a level of requests: synthetic, a dataset or a
// trace, mixed, batched, with images.
func (s *Series) requestLevel(lv *Level, f *finisher, rep, i int, rate float64, concurrency int, cfg results.Config) {
	w := s.Workload
	variedRate := rate
	if w.Mix != nil && w.Mix.vary >= 0 {
		// The level's load is the varied class's rate; the others keep
		// theirs.
		rate += w.Mix.others
	}
	load := s.levelLoad(rate, concurrency)
	load.Seed = s.RepeatSeed(rep)
	RecordRequests(&cfg, w, load)
	src := w.Source
	if _, ok := src.(workload.Synthetic); ok {
		// As sized (fitted, or exact by the tokenizer), in the level's own
		// words.
		syn := s.syn
		syn.Nonce = s.repeatNonce(i, rep)
		if rep > 0 {
			syn.Seed = ScrambleSeed(syn.Seed ^ uint64(rep)<<40)
		}
		src = syn
	}
	f.single = true
	if w.Mix != nil {
		ml := w.Mix.level(s.repeatNonce(i, rep), variedRate)
		src, lv.Classes, f.mixTaken = ml.src, w.Mix.summaryClasses(ml.shares), ml.taken
	}
	if w.Dataset != nil {
		src = s.datasetLevel(f, &load, &cfg, s.repeatNonce(i, rep))
	}
	if w.Batch > 1 {
		src = workload.Batch{Source: src, Size: w.Batch}
	}
	if w.Images != nil {
		images := w.Images.ForLevel(s.repeatNonce(i, rep))
		src = workload.WithImages{Source: src, Images: images}
		if w.imageServer != nil {
			w.imageServer.addLevel(images)
		}
		// Made before the level's clock starts, as far as memory allows.
		images.Prepare(images.Count * imagesAhead(load))
	}
	rq := Requests{Source: src, Load: load}
	if tok := s.tokenizer(); tok != nil {
		rq.CountTokens = tok.Count
	}
	lv.Work, lv.Config = rq, cfg
}

// tokenizer is --tokenizer's, loaded for the synthetic prompts or the
// dataset; nil without one.
func (s *Series) tokenizer() *workload.HFTokenizer {
	if d := s.Workload.Dataset; d != nil && d.Tokenizer != nil {
		return d.Tokenizer
	}
	return s.Workload.Tokenizer
}

// datasetLevel is the level's source from the dataset: replayed as a
// trace (faster or slower, in the level's own words) or read on.
func (s *Series) datasetLevel(f *finisher, load *driver.Load, cfg *results.Config, nonce string) workload.Source {
	w := s.Workload
	f.requests = &trackedDataset{Dataset: s.dataset}
	switch {
	case load.Trace != nil:
		// Every level replays the whole trace, faster or slower; its
		// blocks are the level's own text (the nonce), so one level's
		// never warm the next.
		speedup := load.Rate / workload.TraceRate(workload.TraceSchedule(s.dataset.Entries, 1))
		load.Trace = workload.TraceSchedule(s.dataset.Entries, speedup)
		f.requests.Blocks.Nonce = nonce
		f.trace = true
		cfg.TraceSpeedup = speedup
	case !w.Dataset.Repeat:
		f.requests.Offset = s.next
	}
	recordDataset(cfg, w.Dataset, f.requests.Offset)
	// The level's first images read before its clock starts.
	f.requests.images = w.Dataset.images
	w.Dataset.images.prepare(f.requests.Dataset, imagesAhead(*load))
	return f.requests
}

// imagesAhead is how many requests a level's images are made for before
// it starts: its count, or its rate over its window, and the warm-up.
func imagesAhead(l driver.Load) int {
	n := l.Requests
	if n == 0 && l.Rate > 0 {
		n = int(l.Rate*l.Duration.Seconds()) + 1
	}
	if n == 0 {
		n = 64
	}
	return n + l.Warmup + 16
}
