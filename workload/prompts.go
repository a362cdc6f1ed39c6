package workload

import (
	"math/rand/v2"
	"strings"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCalls are an assistant message's calls; ToolCallID is the call
	// a tool message answers.
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// Images are the message's images (URLs: data URLs of synthetic
	// ones), sent as image_url content parts after its text.
	Images []string `json:"images,omitempty"`
}

// Request is what one arrival sends: either chat messages or a completion
// prompt, and how many tokens to ask for. Tag labels the request for
// breakdowns (for example the turn of a call); it is not sent.
type Request struct {
	Messages  []Message
	Prompt    string
	MaxTokens int
	IgnoreEOS bool
	Tag       int
	// PreviousResponse, for the Responses API, names the response whose
	// conversation this request continues (previous_response_id): the
	// server holds the history, and Messages are only the turn's new
	// ones. KeepResponse asks the server to store this response, for a
	// later turn to name.
	PreviousResponse string
	KeepResponse     bool
	// Inputs, when set, are a pooling request's batch of texts (an
	// embeddings request's input list), sent in place of the messages.
	Inputs []string
	// Tools, when set, are the functions this request offers (a tool
	// dataset's own); otherwise the target's, if any.
	Tools []Tool
	// Class is the request's class in a mix (1-based; 0: no mix), and
	// Model, Fields and Headers what the class sends: its model (empty:
	// the run's), its body fields (over --extra-body's) and headers.
	Class   int
	Model   string
	Fields  []BodyField
	Headers [][2]string
}

// Text returns the request's prompt as one string, for the completions
// endpoint: the prompt itself, or the messages' contents joined by newlines.
func (r Request) Text() string {
	if r.Prompt != "" || len(r.Messages) == 0 {
		return r.Prompt
	}
	var b strings.Builder
	for i, m := range r.Messages {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(m.Content)
	}
	return b.String()
}

// Source hands out the request for each arrival index. Implementations are
// deterministic: the same index and seed always give the same request.
type Source interface {
	Request(i int) Request
}

// FixedPrompt sends the same prompt every time.
type FixedPrompt struct {
	Text      string
	MaxTokens int
}

// Request implements Source.
func (f FixedPrompt) Request(int) Request {
	return Request{Messages: []Message{{Role: "user", Content: f.Text}}, MaxTokens: f.MaxTokens}
}

// fillerWords are short, common English words. Each one, with its leading
// space, is a single token for the simulator's tokenizer and for the BPE
// tokenizers of the common open models, so a run of n words is close to n
// tokens everywhere.
var fillerWords = strings.Fields(`the of and to in is was for on are with as by at be this have from or one had
not but what all were when we there can an your which their said if do will each about how up out them then she
many some so these would other into has more her two like him see time could no make than first been its who now
people my made over did down only way find use may water long little very after words called just where most know
get through back much before go good new write our used me man too any day same right look think also around another
came come work three word must because does part even place well such here take why things help put years different
away again off went old number great tell men say small every found still between name should home big give air line
set own under read last never us left end along while might next sound below saw something thought both few those
always looked show large often together asked house world going want school important until form food keep children
feet land side without boy once animals life enough took sometimes four head above kind began almost live page got
earth need far hand high year mother light parts country father let night following picture being study second eyes
soon times story boys since white days ever paper hard near sentence better best across during today others however
sure means knew try told young miles sun ways thing whole hear example heard several change answer room sea against`)

// Synthetic builds prompts of about Tokens tokens from filler words drawn
// from a generator seeded by the nonce, the seed and the request's index.
// Two prompts' first words differ 399 times in 400 and their first two
// all but always, so no two requests share a leading block (nor, on a
// server that caches token by token, more than a token or so) and a prefix
// cache cannot flatter time to first token. A nonce written in front of
// every prompt would have given a whole run a shared opening.
type Synthetic struct {
	Tokens    int
	MaxTokens int
	Seed      uint64
	// Nonce, when set, seeds the words with the seed and the index, so
	// prompts of one run never repeat those of an earlier run (or sweep
	// level) that may still sit in the server's prefix cache.
	Nonce string
	// WordsPerToken scales the word count; 0 means 1. A calibration against
	// the server's own token count sets it (see Calibrate).
	WordsPerToken float64
	// Spread draws each request's input and output lengths around Tokens
	// and MaxTokens; the zero value sends them all alike.
	Spread Spread
	// Prefix, when set, opens every prompt with one of a pool of shared
	// prefixes, before the request's own Tokens.
	Prefix Pool
	// Vocabulary, when set, makes every prompt exact under the model's
	// tokenizer: Tokens (and the prefix's) are then tokens, not words, and
	// WordsPerToken is not used. Overhead is what the server adds around
	// the text (a chat template, a BOS token), taken off each request's
	// own length so the server counts the length asked.
	Vocabulary *Vocabulary
	Overhead   int
	// Pad appends this many PadWords to every prompt: what a fit by
	// probes places to land a prompt's length exactly.
	Pad int
}

// Spread is a distribution of request lengths: normal with a standard
// deviation (as GuideLLM's and AIPerf's synthetic data), or uniform over
// [N(1−r), N(1+r)] (vLLM's random dataset, --random-range-ratio). Draws
// are clipped at 1 and depend only on the seed and the request's index.
type Spread struct {
	InputStddev, OutputStddev float64
	RangeRatio                float64
	// Input and Output, when set, are measured distributions to draw from
	// instead (a replay of a dataset whose file is gone): their quantiles.
	Input, Output Quantiles
}

// Quantiles is a distribution given by its quantiles at equal steps of
// probability, smallest first; a draw interpolates between them.
type Quantiles []float64

func (q Quantiles) draw(u float64) int {
	if len(q) == 1 {
		return max(int(q[0]+0.5), 1)
	}
	x := u * float64(len(q)-1)
	i := int(x)
	if i >= len(q)-1 {
		return max(int(q[len(q)-1]+0.5), 1)
	}
	return max(int(q[i]+(x-float64(i))*(q[i+1]-q[i])+0.5), 1)
}

// draw returns the length of request i around mean for the given stream
// (0 for input, 1 for output).
func (sp Spread) draw(mean int, sd float64, seed uint64, i int, stream uint64) int {
	q := sp.Input
	if stream == 1 {
		q = sp.Output
	}
	if len(q) > 0 {
		r := rand.New(rand.NewPCG(seed^0x5eed5a11, uint64(i)*2+stream))
		return q.draw(r.Float64())
	}
	if mean <= 0 || (sd <= 0 && sp.RangeRatio <= 0) {
		return mean
	}
	r := rand.New(rand.NewPCG(seed^0x5eed5a11, uint64(i)*2+stream))
	var v float64
	if sp.RangeRatio > 0 {
		lo, hi := float64(mean)*(1-sp.RangeRatio), float64(mean)*(1+sp.RangeRatio)
		v = lo + r.Float64()*(hi-lo)
	} else {
		v = float64(mean) + sd*r.NormFloat64()
	}
	// Clipped at 1 and at the longest length a line may ask, before the
	// conversion to int, which a draw past its range would wrap.
	return int(min(max(v+0.5, 1), MaxOutputTokens))
}

// Lengths returns request i's input and output lengths.
func (s Synthetic) Lengths(i int) (in, out int) {
	return s.Spread.draw(s.Tokens, s.Spread.InputStddev, s.Seed, i, 0), s.Spread.draw(s.MaxTokens, s.Spread.OutputStddev, s.Seed, i, 1)
}

// Request implements Source.
func (s Synthetic) Request(i int) Request {
	in, out := s.Lengths(i)
	// A calibration shifts Tokens by the template's overhead; the spread
	// is drawn around the asked size and shifted alike.
	seed := s.Seed ^ hashString(s.Nonce)
	if s.Vocabulary != nil {
		return Request{Messages: []Message{{Role: "user", Content: s.exact(in, seed, i)}}, MaxTokens: out}
	}
	req, words, _ := s.RequestWords(i, nil)
	req.Messages[0].Content = writeWords(words)
	return req
}

// exact is request i's text of in tokens (the prefix's included in
// neither) under the vocabulary, less the server's overhead.
func (s Synthetic) exact(in int, seed uint64, i int) string {
	own := max(in-s.Overhead, 1)
	if s.Prefix.Tokens <= 0 {
		text, _ := s.Vocabulary.Text(own, seed, uint64(i), false)
		return text
	}
	k := s.Prefix.Of(s.Seed, i)
	prefix, _ := s.Vocabulary.Text(s.Prefix.Tokens, seed^0x9001, 0x9001_0000_0000+uint64(k), false)
	text, _ := s.Vocabulary.Text(own, seed, uint64(i), true)
	return prefix + text
}

// Pool is a set of shared prompt prefixes, as GuideLLM's prefix buckets
// and AIPerf's prompt pools: every request starts with one of Count
// prefixes of Tokens tokens, then goes on with its own text.
type Pool struct {
	Tokens, Count int
	// WordsPerToken sizes the prefixes (0: Synthetic's own); a calibration
	// fixes it before fitting the rest of the prompt.
	WordsPerToken float64
}

// Of is the prefix request i starts with, drawn from the seed and i.
func (p Pool) Of(seed uint64, i int) int {
	if p.Count <= 1 {
		return 0
	}
	r := rand.New(rand.NewPCG(seed^0x9001, uint64(i)))
	return r.IntN(p.Count)
}

// appendWords appends prefix k's words to dst: every prefix holds the same words (the
// pool's bag, from the run's seed) in its own order, drawn from the
// run's nonce (in seed), so all cost alike and another run's prefixes
// are other text.
func (p Pool) appendWords(dst []uint16, wordsPerToken float64, bagSeed, seed uint64, k int) []uint16 {
	return appendFillerText(dst, p.Tokens, wordsPerToken, bagSeed^0x9001, seed^0x9001, 0x9001_0000_0000+uint64(k), 0)
}

func (s Synthetic) prefixWords() float64 {
	if s.Prefix.WordsPerToken > 0 {
		return s.Prefix.WordsPerToken
	}
	return s.WordsPerToken
}

// Unmeasured returns r with tag opening its first message (or its
// prompt): a request of the same shape that shares no prefix with any
// measured one, for warm-ups and length probes, which must not warm the
// cache a measured request will then hit.
func Unmeasured(r Request, tag string) Request {
	if r.Prompt != "" || len(r.Messages) == 0 {
		r.Prompt = tag + "\n" + r.Prompt
		return r
	}
	msgs := append([]Message(nil), r.Messages...)
	msgs[0].Content = tag + "\n" + msgs[0].Content
	r.Messages = msgs
	return r
}

// Filler returns about tokens tokens of filler text drawn from a generator
// seeded by (seed, stream).
func Filler(tokens int, wordsPerToken float64, seed, stream uint64) string {
	if wordsPerToken <= 0 {
		wordsPerToken = 1
	}
	words := int(float64(tokens)*wordsPerToken + 0.5)
	if words < 1 {
		words = 1
	}
	r := rand.New(rand.NewPCG(seed, stream*0x9e3779b97f4a7c15+1))
	var b strings.Builder
	b.Grow(words * 6)
	for w := 0; w < words; w++ {
		if w > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fillerWords[r.IntN(len(fillerWords))])
	}
	return b.String()
}

// Batch sends Size consecutive requests of Source as one pooled
// request's inputs (an embeddings batch): request i is Source's requests
// i×Size to i×Size+Size−1, their texts its inputs.
type Batch struct {
	Source Source
	Size   int
}

// Request implements Source.
func (b Batch) Request(i int) Request {
	first := b.Source.Request(i * b.Size)
	inputs := make([]string, b.Size)
	inputs[0] = first.Text()
	for j := 1; j < b.Size; j++ {
		r := b.Source.Request(i*b.Size + j)
		inputs[j] = r.Text()
	}
	first.Inputs = inputs
	return first
}
