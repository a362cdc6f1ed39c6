package driver

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// wordSender asks each flight for its request as words when words is set,
// else as text, keeps what it was told, and answers as simServer does.
type wordSender struct {
	*simServer
	words bool
	texts map[key]string  // the request's text, as said
	said  map[key]bool    // said as words
	share map[key]float32 // the expected prefix share
}

// key tells requests apart: warm-ups share measured requests' indices.
type key struct {
	index    int
	measured bool
}

func (w *wordSender) Send(ctx context.Context, f *Flight) {
	i := key{f.Rec.Index, f.Measured()}
	text := ""
	if r, words, ok := f.RequestWords(nil); w.words && ok {
		text, w.said[i] = workload.WordText(words), true
		if r.Messages[0].Content != "" {
			panic("a request said as words came with its text")
		}
		if f.Request().Messages[0].Content != text {
			panic("the text written after the words is not theirs")
		}
	} else {
		text = f.Request().Messages[0].Content
	}
	w.texts[i], w.share[i] = text, f.Rec.PrefixShare
	w.simServer.Send(ctx, f)
}

// TestRequestWordsAsRequest runs one level twice, its requests said as
// words and as text: the same texts and the same expected prefix shares
// (a pool of prefixes, so they are well above zero), warm-ups said as
// text (their tag opens the text), and no request built twice.
func TestRequestWordsAsRequest(t *testing.T) {
	src := workload.Synthetic{Tokens: 200, MaxTokens: 8, Seed: 3, Prefix: workload.Pool{Tokens: 300, Count: 2}}
	run := func(words bool) *wordSender {
		const n = 30
		w := &wordSender{simServer: &simServer{service: constant(20 * time.Millisecond)}, words: words,
			texts: map[key]string{}, said: map[key]bool{}, share: map[key]float32{}}
		d := New(Options{Clock: w, Sender: w, Measured: func(*record.Record) {}})
		if _, err := d.RunRequests(context.Background(), Requests{Source: src, Load: Load{Rate: 20, Burstiness: 1, Seed: 1, Requests: n, Warmup: 2}}); err != nil {
			t.Fatal(err)
		}
		return w
	}
	asText, asWords := run(false), run(true)
	shared := 0
	if len(asText.texts) != 32 || len(asWords.texts) != 32 {
		t.Fatalf("%d and %d requests sent, not 30 and 2 warm-ups", len(asText.texts), len(asWords.texts))
	}
	for i := range asText.texts {
		if asWords.said[i] != i.measured {
			t.Errorf("request %+v: said as words %v", i, asWords.said[i])
		}
		if asWords.texts[i] != asText.texts[i] || asWords.share[i] != asText.share[i] {
			t.Fatalf("request %+v: as words %.60q shared %v, as text %.60q shared %v", i, asWords.texts[i], asWords.share[i], asText.texts[i], asText.share[i])
		}
		if asText.share[i] > 0.3 {
			shared++
		}
	}
	if shared < 20 {
		t.Errorf("%d requests shared a prefix: the pool went unseen", shared)
	}
	if !slices.ContainsFunc(slices.Collect(maps.Values(asWords.texts)), func(s string) bool { return len(s) > 1000 }) {
		t.Error("no long text")
	}
}
