package bench

import (
	"cmp"
	"fmt"
	"sync"
	"time"

	"github.com/kneebench/knee/bench/driver"
	"github.com/kneebench/knee/bench/summary"
	"github.com/kneebench/knee/results"
	"github.com/kneebench/knee/workload"
)

// Workload is what every level of a run, sweep or prediction sends.
type Workload struct {
	// Source is the single requests' source: a FixedPrompt, or a
	// Synthetic, whose filler is sized against the server's tokenizer
	// unless NoCalibrate. Nil when Dataset or Voice says what is sent.
	Source workload.Source
	// Dataset, when set, is a dataset file: its entries are the requests,
	// or, with Conversations, its conversations are replayed as calls,
	// the caller pausing GapMin to GapMax between turns.
	Dataset        *DatasetFile
	Conversations  bool
	GapMin, GapMax time.Duration
	// Voice, when set, is the voice workload's calls.
	Voice       *workload.Voice
	NoCalibrate bool
	// Tokenizer, when set, sizes synthetic prompts exactly (see
	// ExactPrompts); a dataset carries its own.
	Tokenizer *workload.HFTokenizer
	// MaxTokens is asked of every request (a dataset entry may say
	// otherwise).
	MaxTokens int
	// Calls bounds a level of calls by a count of arrivals, and
	// MaxConcurrentCalls caps the calls in progress.
	Calls, MaxConcurrentCalls int
	// Images, when set, adds synthetic images to every request;
	// imageServer, when set, serves them to the target.
	Images      *workload.Images
	imageServer *imageServer
	// Batch, above 1, sends that many requests' texts as one pooled
	// request's inputs (an embeddings batch).
	Batch int
	// Pairs says the requests pair a query with documents (rerank,
	// score): each server counts the pairs' tokens its own way.
	Pairs bool
	// Mix, when set, is a --mix file's classes: each its own prompts,
	// target and SLO, all in one load.
	Mix *mixWorkload
	// WantTokens is the prompt size synthetic prompts were asked to have
	// (a shared prefix included), checked against what the server counted
	// (0: not checked).
	WantTokens int
}

// calls reports whether the levels send calls rather than requests.
func (w Workload) calls() bool { return w.Voice != nil || w.Conversations }

// Series prepares the levels of one run, sweep or prediction. What every
// level sends is sized against the server once (the filler words
// calibrated, a dataset counted and sampled); every level gets a nonce of
// its own, so no level's prompts are warm from an earlier one's; and a
// level of a dataset starts where the last one stopped. A live run and a
// prediction prepare their levels alike, and differ only in how a level
// is then run. It is safe for concurrent use, but a dataset's levels must
// be prepared and finished in order.
type Series struct {
	Workload Workload
	// Load is every level's load but for its rate or concurrency: its
	// window, warm-up, seed, drain and shard (a level of calls takes its
	// window, seed, drain and shard).
	Load    driver.Load
	Goodput summary.Goodput
	// Slice is the width of every level's time slices (0: none).
	Slice time.Duration
	// Nonce is the command's: every level's own opens with it.
	Nonce string
	// Need is how many dataset entries the levels send (DatasetNeed).
	Need int

	mu    sync.Mutex
	sized bool
	cal   *Calibration
	// syn, dataset and convs are the sized workload, notes how it was
	// sized; next is the dataset entry (or conversation) the next level
	// starts at.
	syn     workload.Synthetic
	dataset workload.Dataset
	convs   workload.Conversations
	notes   []string
	next    int
}

// LevelNonce is level i's nonce (i from 0).
func (s *Series) LevelNonce(i int) string { return fmt.Sprintf("[%s.%d]", s.Nonce, i+1) }

// levelLoad is the load of a level at rate (an open loop) or concurrency.
func (s *Series) levelLoad(rate float64, concurrency int) driver.Load {
	l := s.Load
	if rate > 0 {
		l.Rate, l.Concurrency = rate, 0
	} else if concurrency > 0 {
		l.Concurrency, l.Rate = concurrency, 0
	}
	return l
}

// calibrate sends the filler calibration once for all levels.
func (s *Series) calibrate(p Prober) Calibration {
	if s.cal == nil {
		c := Calibrate(p)
		s.cal = &c
	}
	return *s.cal
}

// size sizes the workload against p, once.
func (s *Series) size(p Prober) error {
	w := s.Workload
	switch {
	case w.Mix != nil:
		notes, err := w.Mix.size(s, p, w.NoCalibrate)
		if err != nil {
			return err
		}
		s.notes = notes
	case w.Dataset != nil && w.Conversations:
		var note string
		s.convs, note = w.Dataset.sizeConversations(p, w.MaxTokens, s.Load.Seed)
		s.notes = []string{note}
		s.convs.GapMin, s.convs.GapMax = w.GapMin, w.GapMax
	case w.Dataset != nil:
		ds, note, err := w.Dataset.size(p, w.MaxTokens, s.Need, s.Load.Seed)
		if err != nil {
			return err
		}
		if w.Dataset.lengthsOnly() {
			ds.Blocks.WordsPerToken = s.calibrate(p).WordsPerToken
		}
		ds.Blocks.Nonce = s.Nonce
		s.dataset, s.notes = ds, []string{note}
	case w.Voice != nil:
		s.notes = []string{s.calibrate(p).String()}
	default:
		syn, ok := w.Source.(workload.Synthetic)
		if !ok {
			return nil
		}
		syn.Nonce = s.LevelNonce(0)
		s.syn = syn
		var why string
		if w.Tokenizer != nil {
			fit, note, exact := ExactPrompts(p, w.Tokenizer, syn, !w.NoCalibrate)
			if exact {
				s.syn, s.notes = fit, []string{note}
				return nil
			}
			why = note + "; sized against the server instead"
		}
		if w.NoCalibrate {
			s.notes = nonEmpty(why)
			return nil
		}
		cal := s.calibrate(p)
		fit, note := SizedPrompts(p, cal, syn)
		s.syn, s.notes = fit, append(nonEmpty(why), cal.String(), note)
	}
	return nil
}

// MeanSize is the tokens (prompt and answer) a request of the workload
// asks for on average, as it asks them once sized: a synthetic prompt's
// size and max_tokens, a dataset entry's counted length and output, a
// call's last turn; 0 before sizing, or for a fixed prompt.
func (s *Series) MeanSize() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.Workload
	switch {
	case w.Mix != nil:
		sum := 0.0
		for _, c := range w.Mix.classes {
			size := float64(c.spec.InputTokens + c.spec.MaxTokens)
			if n := len(c.ds.Entries); n > 0 {
				size = 0
				for _, e := range c.ds.Entries {
					size += float64(e.InputTokens+cmp.Or(e.OutputTokens, c.spec.MaxTokens)) / float64(n)
				}
			}
			sum += c.spec.Share * size
		}
		return sum
	case w.Voice != nil:
		v := w.Voice
		return float64(v.SystemPromptTokens + v.Turns*(v.UserTokens+v.OutputTokens))
	case w.Dataset != nil && !w.Conversations && len(s.dataset.Entries) > 0:
		sum := 0.0
		for _, e := range s.dataset.Entries {
			out := e.OutputTokens
			if out <= 0 {
				out = w.MaxTokens
			}
			sum += float64(e.InputTokens + out)
		}
		return sum / float64(len(s.dataset.Entries))
	}
	if syn, ok := w.Source.(workload.Synthetic); ok {
		return float64(syn.Prefix.Tokens + syn.Tokens + syn.MaxTokens)
	}
	return 0
}

// Size sizes the workload against p now (Prepare does on first use), so
// that a dataset whose bounds leave nothing fails before any level runs.
func (s *Series) Size(p Prober) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sized {
		return nil
	}
	if err := s.size(p); err != nil {
		return err
	}
	s.sized = true
	return nil
}

// At is a level's load on an axis ("rate": arrivals, or calls, per
// second; "concurrency": closed-loop streams) as a rate or a concurrency.
func At(axis string, load float64) (rate float64, concurrency int) {
	if axis == "concurrency" {
		return 0, int(load)
	}
	return load, 0
}

// Level is level i of the series at rate (open loop) or concurrency,
// sized against p (the live client, or a simulated server) on first use.
// cfg is the target's configuration, to which the level's own is added.
// Once it has run, its Finish adds what the series knows of it.
func (s *Series) Level(i int, p Prober, rate float64, concurrency int, cfg results.Config) (*Level, error) {
	return s.RepeatLevel(0, i, p, rate, concurrency, cfg)
}

// finisher is what a series knows of one of its levels once it has run.
type finisher struct {
	s     *Series
	notes []string
	// single says the level sent single requests, trace that it replayed
	// a trace; requests and calls are a dataset's entries or
	// conversations as the level took them.
	single, trace bool
	requests      *trackedDataset
	calls         *trackedCalls
	// mixTaken are a mix's dataset classes' sources in the level.
	mixTaken []*trackedDataset
	// served is the image server's count as the level began (-1: knee
	// serves no images).
	served int
}

// finish adds to a level's result what the series knows of it (how its
// prompts were sized, whether they repeat an earlier level's or ran out,
// whether the server counted the prompt size asked), and moves a
// dataset's next level past the entries this one took.
func (f *finisher) finish(res *results.Run) {
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	res.Notes = append(res.Notes, f.notes...)
	res.JudgeTools()
	f.imagesFetched(res)
	w := s.Workload
	if w.Mix != nil {
		w.Mix.judge(res)
		w.Mix.advance(f.mixTaken)
	}
	if im := res.Images; im != nil && w.WantTokens > 0 && im.Images > 0 {
		// The text was sized; what the server counted past it is the
		// images'.
		im.TextTokens = im.Requests * int64(w.WantTokens)
		v := float64(im.PromptTokens-im.TextTokens) / float64(im.Images)
		im.TokensPerImage = &v
	} else if w.WantTokens > 0 && f.single && w.Pairs {
		res.Notes = append(res.Notes, "the prompt tokens are the server's count of the query-document pairs (vLLM tokenizes each pair whole, so the query counts once a document): not checked against --input-tokens")
	} else if w.WantTokens > 0 && f.single {
		// A batch's prompt tokens are its inputs' together.
		res.Warnings = append(res.Warnings, results.InputSizeWarnings(w.WantTokens*max(w.Batch, 1), res.Tokens)...)
	}
	switch {
	case f.requests != nil:
		resent := ""
		switch {
		case s.next == 0:
		case f.trace && !w.Dataset.lengthsOnly():
			resent = "every level replays the whole trace: the lines that carry text resend an earlier level's prompts, which a prefix-caching server answers warm"
		case w.Dataset.Repeat:
			resent = "--dataset-repeat: this level resent the prompts of earlier levels; a prefix-caching server answers them warm"
		}
		if warn := f.requests.repeatWarning(resent); warn != "" {
			res.Warnings = append(res.Warnings, warn)
		}
		s.next = f.requests.Offset + f.requests.used()
	case f.calls != nil:
		if warn := f.calls.repeatWarning(w.Dataset.Repeat && s.next > 0); warn != "" {
			res.Warnings = append(res.Warnings, warn)
		}
		s.next = f.calls.Offset + f.calls.used()
	}
}

// imagesFetched says how many of the images knee served the target
// fetched over the level, and warns when it fetched none: a server that
// does not fetch image URLs (or cannot reach knee) answers without them.
func (f *finisher) imagesFetched(res *results.Run) {
	im := res.Images
	if f.served < 0 || im == nil || im.Images == 0 {
		return
	}
	n := int64(f.s.Workload.imageServer.count(0) - f.served)
	im.Served = &n
	if n == 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the target fetched none of the %d images knee served it by URL (--image-serve): it answered without them, or could not reach knee's address; the image bytes counted are the URLs'", im.Images))
	}
}

// nonEmpty is a list of the note when there is one.
func nonEmpty(note string) []string {
	if note == "" {
		return nil
	}
	return []string{note}
}

// templateTokens is what the server adds around a message's text, as the
// sizing probed it: the exact path's overhead, or the calibration's
// one-word message less its word; 0 when nothing was probed.
func (s *Series) templateTokens() int {
	switch {
	case s.syn.Vocabulary != nil:
		return s.syn.Overhead
	case s.cal != nil && s.cal.OK:
		return max(s.cal.Overhead-1, 0)
	}
	return 0
}
