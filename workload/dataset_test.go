package workload

import (
	"math"
	"os"
	"strings"
	"testing"
)

// TestParseDatasetFormats: each accepted shape, detected from the content.
func TestParseDatasetFormats(t *testing.T) {
	cases := []struct {
		name, text string
		format     DatasetFormat
		entries    int
		first      []Message
		maxTokens  int
	}{
		{"prompt JSONL", "{\"prompt\":\"a\",\"max_tokens\":5}\n\n{\"prompt\":\"b\"}\n", FormatPrompt, 2, []Message{{"user", "a"}}, 5},
		{"chat JSONL", `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"and?"}],"max_tokens":7}` + "\n",
			FormatChat, 1, []Message{{"system", "be brief"}, {"user", "hi"}, {"assistant", "hello"}, {"user", "and?"}}, 7},
		{"ShareGPT JSONL", `{"conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"r"}]}` + "\n", FormatShareGPT, 1, []Message{{"user", "q"}}, 0},
	}
	for _, tc := range cases {
		got, format, err := ParseDataset(strings.NewReader(tc.text), FormatAuto)
		if err != nil || format != tc.format || len(got) != tc.entries {
			t.Errorf("%s: %d entries, format %q, %v", tc.name, len(got), format, err)
			continue
		}
		if len(got[0].Messages) != len(tc.first) || got[0].MaxTokens != tc.maxTokens {
			t.Errorf("%s: first entry %+v", tc.name, got[0])
			continue
		}
		for i, m := range tc.first {
			if got[0].Messages[i] != m {
				t.Errorf("%s: message %d is %+v, want %+v", tc.name, i, got[0].Messages[i], m)
			}
		}
	}
	f, _ := os.Open("testdata/sharegpt.json")
	defer f.Close()
	got, format, err := ParseDataset(f, FormatAuto)
	// Conversation b has one turn and is skipped, as vLLM skips it.
	if err != nil || format != FormatShareGPT || len(got) != 3 || got[0].Reference != "once upon a time the sea" || got[1].Messages[0].Content != "tell me a story ." {
		t.Fatalf("ShareGPT: %+v %q %v", got, format, err)
	}
}

// TestParseDatasetErrors: every broken file gets a message that names the
// line and says what was expected.
func TestParseDatasetErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"", "empty"},
		{"not json", "line 1 is not JSON"},
		{"{\"prompt\":\"a\"}\n{\"prompt\":1}\n", "line 2"},
		{"{\"max_tokens\":3}", "none of \"prompt\", \"messages\" or \"conversations\""},
		{"{\"prompt\":\"x\",\"max_tokens\":-1}", "max_tokens must not be negative"},
		{`{"messages":[{"role":"wizard","content":"x"}]}`, `role "wizard"`},
		{`[{"conversations": "nope"}]`, "entry 1"},
		{`[{"id": 1}]`, "missing \"conversations\""},
	} {
		_, _, err := ParseDataset(strings.NewReader(tc.text), FormatAuto)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseDataset(%q) = %v, want an error containing %q", tc.text, err, tc.want)
		}
	}
	// Forcing the format reads the file as that format.
	if _, _, err := ParseDataset(strings.NewReader(`{"prompt":"a"}`), FormatChat); err == nil || !strings.Contains(err.Error(), "missing \"messages\"") {
		t.Errorf("a prompt line read as chat: %v", err)
	}
}

// TestTokenizerSizesExactly: with a tokenizer.json the lengths are the
// model's own: the WordLevel fixture counts words and punctuation, so
// "tell me a story about the sea ." is 8 tokens and its answer 6.
func TestTokenizerSizesExactly(t *testing.T) {
	tok, err := LoadTokenizer("testdata/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open("testdata/sharegpt.json")
	defer f.Close()
	entries, _, err := ParseDataset(f, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	kept, dropped := Size(entries, tok, ShareGPTFilters, 128)
	// d ("a a" → 2 tokens, answer 2) is under vLLM's 4-token minimum.
	if dropped != 1 || len(kept) != 2 {
		t.Fatalf("kept %d dropped %d, want 2 and 1", len(kept), dropped)
	}
	if kept[0].InputTokens != 8 || kept[0].OutputTokens != 6 || kept[1].InputTokens != 5 || kept[1].OutputTokens != 4 {
		t.Errorf("sizes %d/%d and %d/%d, want 8/6 and 5/4", kept[0].InputTokens, kept[0].OutputTokens, kept[1].InputTokens, kept[1].OutputTokens)
	}
	r := Dataset{Entries: kept, DefaultMaxTokens: 128}.Request(0)
	if r.MaxTokens != 6 || !r.IgnoreEOS {
		t.Errorf("a ShareGPT request asks for %d tokens (ignore_eos %v), want its reference's 6 with ignore_eos", r.MaxTokens, r.IgnoreEOS)
	}
	if kept, _ := Size(entries, tok, Filters{MaxContext: 10}, 128); len(kept) != 2 {
		t.Errorf("a 10-token context bound kept %d, want 2 (8+6 is over)", len(kept))
	}
	if _, err := LoadTokenizer("testdata/missing.json"); err == nil {
		t.Error("a missing tokenizer loaded")
	}
}

// TestSampleIsSeeded: the same seed samples the same entries.
func TestSampleIsSeeded(t *testing.T) {
	var entries []DatasetEntry
	for i := 0; i < 100; i++ {
		entries = append(entries, DatasetEntry{Line: i + 1})
	}
	a, b, c := Sample(entries, 10, 1), Sample(entries, 10, 1), Sample(entries, 10, 2)
	same := func(x, y []DatasetEntry) bool {
		for i := range x {
			if x[i].Line != y[i].Line {
				return false
			}
		}
		return true
	}
	if len(a) != 10 || !same(a, b) || same(a, c) {
		t.Errorf("samples %v %v %v", a, b, c)
	}
	if n := len(Sample(entries, 0, 1)); n != 100 {
		t.Errorf("no count sampled %d, want all 100", n)
	}
}

// TestSpreadMeasured: 20,000 draws of a normal spread have the mean and
// standard deviation asked (within 2%), none under 1; a range ratio stays
// inside its bounds and fills them uniformly (mean at the centre).
func TestSpreadMeasured(t *testing.T) {
	stats := func(s Synthetic, out bool) (mean, sd, lo, hi float64) {
		lo = math.Inf(1)
		var sum, sq float64
		const n = 20000
		for i := 0; i < n; i++ {
			in, o := s.Lengths(i)
			v := float64(in)
			if out {
				v = float64(o)
			}
			sum += v
			sq += v * v
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		mean = sum / n
		return mean, math.Sqrt(sq/n - mean*mean), lo, hi
	}
	normal := Synthetic{Tokens: 512, MaxTokens: 128, Seed: 3, Spread: Spread{InputStddev: 128, OutputStddev: 32}}
	if m, sd, lo, _ := stats(normal, false); math.Abs(m-512) > 512*0.02 || math.Abs(sd-128) > 128*0.02 || lo < 1 {
		t.Errorf("input mean %.1f sd %.1f min %.0f, want 512, 128, ≥ 1", m, sd, lo)
	}
	if m, sd, _, _ := stats(normal, true); math.Abs(m-128) > 128*0.02 || math.Abs(sd-32) > 32*0.02 {
		t.Errorf("output mean %.1f sd %.1f, want 128 and 32", m, sd)
	}
	ranged := Synthetic{Tokens: 1000, MaxTokens: 100, Seed: 3, Spread: Spread{RangeRatio: 0.5}}
	if m, _, lo, hi := stats(ranged, false); lo < 500 || hi > 1500 || math.Abs(m-1000) > 10 {
		t.Errorf("range ratio 0.5 around 1000: mean %.1f in [%.0f, %.0f], want 1000 in [500, 1500]", m, lo, hi)
	}
	clipped := Synthetic{Tokens: 2, MaxTokens: 2, Seed: 3, Spread: Spread{InputStddev: 50}}
	if _, _, lo, _ := stats(clipped, false); lo < 1 {
		t.Errorf("a draw under 1: %v", lo)
	}
	if a, b := normal.Request(7), normal.Request(7); a.Messages[0].Content != b.Messages[0].Content || a.MaxTokens != b.MaxTokens {
		t.Error("the same index drew different requests")
	}
}
