package workload

import (
	"context"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func parse(t *testing.T, text string, f DatasetFormat) *ParsedDataset {
	t.Helper()
	p, err := ParseDataset(strings.NewReader(text), f)
	if err != nil {
		t.Fatalf("%.60q: %v", text, err)
	}
	return p
}

// TestParseDatasetFormats: each accepted shape, detected from the content,
// with its lengths under the names the peer tools give them.
func TestParseDatasetFormats(t *testing.T) {
	cases := []struct {
		name, text string
		format     DatasetFormat
		entries    int
		first      []Message
		maxTokens  int
		lengthKey  string
	}{
		{"prompt JSONL", "{\"prompt\":\"a\",\"max_tokens\":5}\n\n{\"prompt\":\"b\"}\n", FormatPrompt, 2, []Message{{Role: "user", Content: "a"}}, 5, "max_tokens"},
		{"GuideLLM JSONL", `{"prompt":"a","prompt_tokens_count":1,"output_tokens_count":9}`, FormatPrompt, 1, []Message{{Role: "user", Content: "a"}}, 9, "output_tokens_count"},
		{"chat JSONL", `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"and?"}],"max_tokens":7}` + "\n",
			FormatChat, 1, []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}, {Role: "user", Content: "and?"}}, 7, "max_tokens"},
		{"chat with content parts", `{"messages":[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"http://h/a.png"}},{"type":"text","text":"here"},{"type":"input_image","image_url":"b.jpg"}]}]}`,
			FormatChat, 1, []Message{{Role: "user", Content: "look\nhere", Images: []string{"http://h/a.png", "b.jpg"}}}, 0, ""},
		{"LLaVA JSON", `[{"id":"000000033471","image":"coco/train2017/000000033471.jpg","conversations":[{"from":"human","value":"<image>\nWhat are the colors of the bus?"},{"from":"gpt","value":"White and red."},{"from":"human","value":"And the sky?"},{"from":"gpt","value":"Blue."}]}]`,
			FormatShareGPT, 1, []Message{{Role: "user", Content: "What are the colors of the bus?", Images: []string{"coco/train2017/000000033471.jpg"}}}, 0, ""},
		{"ShareGPT-4V, tag last", `{"id":"sa_545504","image":"sam/images/sa_545504.jpg","conversations":[{"from":"human","value":"What do you see happening in this image?\n<image>"},{"from":"gpt","value":"A street."}]}`,
			FormatShareGPT, 1, []Message{{Role: "user", Content: "What do you see happening in this image?", Images: []string{"sam/images/sa_545504.jpg"}}}, 0, ""},
		{"LLaVA-OneVision: a list", `{"image":["a.png","b.png"],"conversations":[{"from":"human","value":"<image>\n<image>\nCompare."},{"from":"gpt","value":"Same."}]}`,
			FormatShareGPT, 1, []Message{{Role: "user", Content: "Compare.", Images: []string{"a.png", "b.png"}}}, 0, ""},
		{"AIPerf single_turn images", `{"text":"describe","images":["/data/x.png",{"url":"https://h/y.jpg"}]}`,
			FormatSingleTurn, 1, []Message{{Role: "user", Content: "describe", Images: []string{"/data/x.png", "https://h/y.jpg"}}}, 0, ""},
		{"GuideLLM prompt with an image column", `{"prompt":"what is it?","image":"z.webp"}`,
			FormatPrompt, 1, []Message{{Role: "user", Content: "what is it?", Images: []string{"z.webp"}}}, 0, ""},
		{"ShareGPT JSONL", `{"conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"r"}]}` + "\n", FormatShareGPT, 1, []Message{{Role: "user", Content: "q"}}, 0, ""},
		{"ShareGPT: leading system and gpt turns", `[{"conversations":[{"from":"system","value":"be kind"},{"from":"gpt","value":"hello!"},{"from":"human","value":"q"},{"from":"gpt","value":"r"}]}]`,
			FormatShareGPT, 1, []Message{{Role: "system", Content: "be kind"}, {Role: "user", Content: "q"}}, 0, ""},
		{"AIPerf single_turn", `{"text":"what is ML?","output_length":50}` + "\n" + `{"texts":["a","b"]}`, FormatSingleTurn, 2, []Message{{Role: "user", Content: "what is ML?"}}, 50, "output_length"},
		{"AIPerf multi_turn", `{"session_id":"s1","turns":[{"role":"system","text":"terse"},{"text":"hi","output_length":4},{"text":"more","delay":500}]}`,
			FormatMultiTurn, 1, []Message{{Role: "system", Content: "terse"}, {Role: "user", Content: "hi"}}, 4, "output_length"},
		{"output_tokens", `{"prompt":"a","output_tokens":3}`, FormatPrompt, 1, []Message{{Role: "user", Content: "a"}}, 3, "output_tokens"},
	}
	for _, tc := range cases {
		got := parse(t, tc.text, FormatAuto)
		if got.Format != tc.format || len(got.Entries) != tc.entries || got.LengthKey != tc.lengthKey {
			t.Errorf("%s: %d entries, format %q, length key %q", tc.name, len(got.Entries), got.Format, got.LengthKey)
			continue
		}
		e := got.Entries[0]
		if len(e.Messages) != len(tc.first) || e.MaxTokens != tc.maxTokens {
			t.Errorf("%s: first entry %+v", tc.name, e)
			continue
		}
		for i, m := range tc.first {
			if !reflect.DeepEqual(e.Messages[i], m) {
				t.Errorf("%s: message %d is %+v, want %+v", tc.name, i, e.Messages[i], m)
			}
		}
	}
	f, _ := os.Open("testdata/sharegpt.json")
	defer f.Close()
	got, err := ParseDataset(f, FormatAuto)
	// Conversation b has one turn and is skipped, as vLLM skips it.
	if err != nil || got.Format != FormatShareGPT || len(got.Entries) != 3 || got.Entries[0].Reference != "once upon a time the sea" || got.Entries[1].Messages[0].Content != "tell me a story ." {
		t.Fatalf("ShareGPT: %+v %v", got, err)
	}
	// Every conversation is also kept whole, for multi-turn replay.
	if len(got.Conversations) != 4 || len(got.Conversations[2].Turns) != 2 || got.Conversations[2].Turns[0].Answer != "once upon a time" || got.Conversations[2].Turns[1].Answer != "" {
		t.Errorf("ShareGPT conversations: %+v", got.Conversations)
	}
}

// TestParseMultiTurn: sessions keep their turns, answers, delays and
// lengths, and a leading system turn becomes the system prompt.
func TestParseMultiTurn(t *testing.T) {
	p := parse(t, `{"session_id":7,"turns":[{"role":"system","text":"terse"},{"text":"hi","max_tokens":4},{"role":"assistant","text":"hello"},{"texts":["more","please"],"delay":1500}]}`, FormatAuto)
	c := p.Conversations[0]
	if c.ID != "7" || c.System != "terse" || len(c.Turns) != 2 {
		t.Fatalf("%+v", c)
	}
	if !reflect.DeepEqual(c.Turns[0], ConversationTurn{User: "hi", Answer: "hello", MaxTokens: 4}) {
		t.Errorf("turn 1: %+v", c.Turns[0])
	}
	if !reflect.DeepEqual(c.Turns[1], ConversationTurn{User: "more\nplease", Delay: 1500 * time.Millisecond, HasDelay: true}) {
		t.Errorf("turn 2: %+v", c.Turns[1])
	}
	chat := parse(t, `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`, FormatAuto)
	if cc := chat.Conversations[0]; cc.System != "s" || len(cc.Turns) != 2 || cc.Turns[0].Answer != "b" || cc.Turns[1].User != "c" {
		t.Errorf("chat conversation: %+v", cc)
	}
}

// TestParseTraces: a Mooncake trace keeps its timestamps, lengths and
// block ids; AIPerf delays accumulate into timestamps.
func TestParseTraces(t *testing.T) {
	p := parse(t, `{"timestamp": 0, "input_length": 700, "output_length": 52, "hash_ids": [0, 1]}
{"timestamp": 27482, "input_length": 1030, "output_length": 8, "hash_ids": [0, 1, 2]}
{"timestamp": 30000.5, "text_input": "What is the capital of France?", "output_length": 20}`, FormatAuto)
	if p.Format != FormatMooncake || !p.Timed || len(p.Entries) != 3 || p.LengthKey != "output_length" {
		t.Fatalf("%+v", p)
	}
	if e := p.Entries[1]; e.InputLength != 1030 || e.MaxTokens != 8 || e.Timestamp != 27482*time.Millisecond || len(e.HashIDs) != 3 {
		t.Errorf("line 2: %+v", e)
	}
	if e := p.Entries[2]; e.Messages[0].Content != "What is the capital of France?" || e.Timestamp != 30000500*time.Microsecond {
		t.Errorf("line 3: %+v", e)
	}
	d := parse(t, `{"text":"a","delay":100}
{"text":"b","delay":250}`, FormatAuto)
	if !d.Timed || d.Entries[0].Timestamp != 100*time.Millisecond || d.Entries[1].Timestamp != 350*time.Millisecond {
		t.Errorf("delays: %+v", d.Entries)
	}
}

// TestParseDatasetErrors: every broken file gets a message that names the
// line and says what was expected.
func TestParseDatasetErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"", "empty"},
		{"\ufeff", "empty"},
		{"not json", "line 1 is not JSON"},
		{"{\"prompt\":\"a\"}\n{\"prompt\":1}\n", "line 2"},
		{"{\"max_tokens\":3}", `none of "prompt", "messages", "conversations"`},
		{"{\"prompt\":\"x\",\"max_tokens\":-1}", "max_tokens must not be negative"},
		{"{\"prompt\":\"x\",\"max_tokens\":1e12}", "more than 10000000"},
		{"{\"prompt\":\"x\",\"output_length\":2.5}", "not a whole number"},
		{`{"messages":[{"role":"wizard","content":"x"}]}`, `role "wizard"`},
		{`[{"conversations": "nope"}]`, "line 1"},
		{`[{"id": 1}]`, "none of"},
		{`{"text":"a","timestamp":-5}`, "timestamp"},
		{`{"input_length":-3}`, "must not be negative"},
		{`{"input_length":0,"output_length":3}`, "needs \"input_length\""},
		{`{"input_length":10,"hash_ids":[1,-2]}`, "hash_ids[1]"},
		{`{"session_id":"x","turns":[]}`, "non-empty"},
		{`{"session_id":"x","turns":[{"role":"assistant","text":"hi"}]}`, "assistant turn before"},
		// Delays each in bounds whose sum would overflow a duration.
		{strings.Repeat(`{"text":"a","delay":1e12}`+"\n", 2), "line 2: delay 1e+12 ms puts the line more than"},
		{`{"session_id":"x","turns":[{"text":"a","delay":9e11},{"text":"b","delay":2e11}]}`, "add up to more than"},
	} {
		_, err := ParseDataset(strings.NewReader(tc.text), FormatAuto)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseDataset(%q) = %v, want an error containing %q", tc.text, err, tc.want)
		}
	}
	// Forcing the format reads the file as that format.
	if _, err := ParseDataset(strings.NewReader(`{"prompt":"a"}`), FormatChat); err == nil || !strings.Contains(err.Error(), "missing \"messages\"") {
		t.Errorf("a prompt line read as chat: %v", err)
	}
	// A BOM is skipped, and a first line far over 64 KiB reads.
	long := `{"prompt":"` + strings.Repeat("word ", 40000) + `"}`
	if p, err := ParseDataset(strings.NewReader("\ufeff"+long+"\n"+long), FormatAuto); err != nil || len(p.Entries) != 2 {
		t.Errorf("a BOM and 200 KB lines: %v", err)
	}
}

// TestTokenizerSizesExactly: with a tokenizer.json the lengths are the
// model's own: the WordLevel fixture counts words and punctuation, so
// "tell me a story about the sea ." is 8 tokens and its answer 6.
func TestTokenizerSizesExactly(t *testing.T) {
	tok, err := LoadTokenizer(context.Background(), "testdata/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open("testdata/sharegpt.json")
	defer f.Close()
	p, err := ParseDataset(f, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	kept, sz := Size(p.Entries, tok, ShareGPTFilters, 128, 0, 1)
	// d ("a a" → 2 tokens, answer 2) is under vLLM's 4-token minimum.
	if sz.Dropped != 1 || len(kept) != 2 {
		t.Fatalf("kept %d dropped %d, want 2 and 1", len(kept), sz.Dropped)
	}
	byLine := map[int]DatasetEntry{}
	for _, e := range kept {
		byLine[e.Line] = e
	}
	if a, c := byLine[1], byLine[3]; a.InputTokens != 8 || a.OutputTokens != 6 || c.InputTokens != 5 || c.OutputTokens != 4 {
		t.Errorf("sizes %d/%d and %d/%d, want 8/6 and 5/4", a.InputTokens, a.OutputTokens, c.InputTokens, c.OutputTokens)
	}
	r := Dataset{Entries: []DatasetEntry{byLine[1]}, DefaultMaxTokens: 128}.Request(0)
	if r.MaxTokens != 6 || !r.IgnoreEOS {
		t.Errorf("a ShareGPT request asks for %d tokens (ignore_eos %v), want its reference's 6 with ignore_eos", r.MaxTokens, r.IgnoreEOS)
	}
	if kept, _ := Size(p.Entries, tok, Filters{MaxContext: 10}, 128, 0, 1); len(kept) != 2 {
		t.Errorf("a 10-token context bound kept %d, want 2 (8+6 is over)", len(kept))
	}
	if _, err := LoadTokenizer(context.Background(), "testdata/missing.json"); err == nil {
		t.Error("a missing tokenizer loaded")
	}
}

// TestSizeSamplesLazily: the same seed takes the same entries, a count
// stops the counting once it has them, and a trace keeps its order.
func TestSizeSamplesLazily(t *testing.T) {
	var entries []DatasetEntry
	for i := 0; i < 100; i++ {
		entries = append(entries, DatasetEntry{Messages: []Message{{Role: "user", Content: "a b c d e"}}, Line: i + 1})
	}
	counted := 0
	counter := countFunc(func(s string) int { counted++; return len(strings.Fields(s)) })
	a, sz := Size(entries, counter, Filters{}, 8, 10, 1)
	b, _ := Size(entries, counter, Filters{}, 8, 10, 1)
	c, _ := Size(entries, counter, Filters{}, 8, 10, 2)
	lines := func(x []DatasetEntry) (out []int) {
		for _, e := range x {
			out = append(out, e.Line)
		}
		return out
	}
	if len(a) != 10 || sz.Examined != 10 || !slices.Equal(lines(a), lines(b)) || slices.Equal(lines(a), lines(c)) {
		t.Errorf("samples %v %v %v, examined %d", lines(a), lines(b), lines(c), sz.Examined)
	}
	if counted != 30 {
		t.Errorf("counted %d texts for three samples of 10, want 30", counted)
	}
	if all, sz := Size(entries, counter, Filters{}, 8, 0, 1); len(all) != 100 || sz.Short {
		t.Errorf("no count kept %d, want all 100", len(all))
	}
	if _, sz := Size(entries, counter, Filters{}, 8, 500, 1); !sz.Short {
		t.Error("asking 500 of 100 is not short")
	}
	for i := range entries {
		entries[i].Timed = true
	}
	if tr, _ := Size(entries, counter, Filters{}, 8, 5, 1); !slices.Equal(lines(tr), []int{1, 2, 3, 4, 5}) {
		t.Errorf("a trace took lines %v, want its first 5 in order", lines(tr))
	}
}

type countFunc func(string) int

func (f countFunc) Count(s string) int { return f(s) }

// TestDatasetContinuesAndBounds: a level starting at an offset takes the
// entries after it, wrapping only past the end; a line without an output
// length gets the run's, and never an unbounded request.
func TestDatasetContinuesAndBounds(t *testing.T) {
	var entries []DatasetEntry
	for i := 0; i < 5; i++ {
		entries = append(entries, DatasetEntry{Messages: []Message{{Role: "user", Content: strconv.Itoa(i)}}})
	}
	d := Dataset{Entries: entries, DefaultMaxTokens: 0, Offset: 3}
	if got := d.Request(0).Messages[0].Content + d.Request(1).Messages[0].Content + d.Request(2).Messages[0].Content; got != "340" {
		t.Errorf("offset 3 took %q, want 340", got)
	}
	if d.Request(0).MaxTokens != DefaultMaxTokens {
		t.Errorf("no length anywhere gave max_tokens %d", d.Request(0).MaxTokens)
	}
	if !d.Repeats(3) || d.Repeats(2) {
		t.Error("repeats misjudged")
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

// TestGuideLLMColumns: a prompt row's columns are found by GuideLLM's own
// names and variants — its text column (question, instruction, …), its
// prefix column as the system prompt, its output count under
// completion_tokens_count — and numbered text columns are a session's
// turns, replayed whole.
func TestGuideLLMColumns(t *testing.T) {
	cases := []struct {
		name     string
		line     string
		messages []Message
		output   int
		turns    []string
	}{
		{"question", `{"question":"why?","output_tokens_count":5}`, []Message{{Role: "user", Content: "why?"}}, 5, nil},
		{"system prompt", `{"prompt":"hi","system_prompt":"be brief"}`, []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}, 0, nil},
		{"completion count", `{"prompt":"hi","completion_tokens_count":12}`, []Message{{Role: "user", Content: "hi"}}, 12, nil},
		{"plural and capitalised", `{"Instructions":"do it","Prefix":"you are terse"}`, []Message{{Role: "system", Content: "you are terse"}, {Role: "user", Content: "do it"}}, 0, nil},
		{"numbered turns", `{"prompt_0":"first","prompt_1":"second","prompt_2":"third","output_tokens_count":7}`, []Message{{Role: "user", Content: "first"}}, 7, []string{"first", "second", "third"}},
	}
	for _, c := range cases {
		p, err := ParseDataset(strings.NewReader(c.line), FormatAuto)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		e := p.Entries[0]
		if p.Format != FormatPrompt || !reflect.DeepEqual(e.Messages, c.messages) || e.MaxTokens != c.output {
			t.Errorf("%s: %s %+v max_tokens %d, want %+v %d", c.name, p.Format, e.Messages, e.MaxTokens, c.messages, c.output)
		}
		var turns []string
		if len(p.Conversations) > 0 {
			for _, tr := range p.Conversations[0].Turns {
				turns = append(turns, tr.User)
			}
		}
		if !slices.Equal(turns, c.turns) || p.Sessions != (c.turns != nil) {
			t.Errorf("%s: turns %q (sessions %v), want %q", c.name, turns, p.Sessions, c.turns)
		}
	}
}

// TestBFCLLines: Berkeley Function Calling Leaderboard lines as its
// single-turn files hold them: the question's first turn is the request,
// the functions its tools (Python type names made JSON schema's); a
// multi-turn line, which names its functions by class, and a function
// without a usable name are refused naming the line.
func TestBFCLLines(t *testing.T) {
	simple := `{"id": "simple_0", "question": [[{"role": "user", "content": "Find the area of a triangle with a base of 10 units and height of 5 units."}]], "function": [{"name": "calculate_triangle_area", "description": "Calculate the area of a triangle given its base and height.", "parameters": {"type": "dict", "properties": {"base": {"type": "integer", "description": "The base of the triangle."}, "height": {"type": "integer", "description": "The height of the triangle."}, "unit": {"type": "string", "description": "The unit of measure (defaults to 'units' if not specified)"}}, "required": ["base", "height"]}}]}`
	parallel := `{"id": "parallel_multiple_0", "question": [[{"role": "system", "content": "Be exact."}, {"role": "user", "content": "Sum of multiples of 3 and 5 below 1000, and the product of primes below 20?"}]], "function": [{"name": "math_toolkit.sum_of_multiples", "parameters": {"type": "dict", "properties": {"lower_limit": {"type": "integer"}, "multiples": {"type": "array", "items": {"type": "integer"}}}}}, {"name": "math_toolkit.product_of_primes", "parameters": {"type": "dict", "properties": {"count": {"type": "float"}}}}]}`
	p, err := ParseDataset(strings.NewReader(simple+"\n"+parallel+"\n"), FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != FormatBFCL || len(p.Entries) != 2 {
		t.Fatalf("format %s, %d entries", p.Format, len(p.Entries))
	}
	e := p.Entries[0]
	if len(e.Messages) != 1 || e.Messages[0].Role != "user" || len(e.Tools) != 1 || e.Tools[0].Name != "calculate_triangle_area" ||
		!strings.Contains(string(e.Tools[0].Parameters), `"type":"object"`) || strings.Contains(string(e.Tools[0].Parameters), `"dict"`) {
		t.Errorf("simple: %+v", e)
	}
	if e := p.Entries[1]; len(e.Messages) != 2 || len(e.Tools) != 2 || !strings.Contains(string(e.Tools[1].Parameters), `"number"`) {
		t.Errorf("parallel: %+v", e)
	}
	if r := (Dataset{Entries: p.Entries}).Request(0); len(r.Tools) != 1 {
		t.Errorf("the request carries %d tools, want the line's 1", len(r.Tools))
	}
	for line, want := range map[string]string{
		`{"id": "multi_turn_base_0", "question": [[{"role": "user", "content": "x"}]], "initial_config": {}, "involved_classes": ["GorillaFileSystem"]}`: "involved_classes",
		`{"question": [[{"role": "user", "content": "x"}]], "function": [{"name": "has space"}]}`:                                                        "name",
		`{"question": [], "function": [{"name": "f"}]}`:                                                                                                  `"question"`,
		`{"question": [[{"role": "assistant", "content": "x"}]], "function": [{"name": "f"}]}`:                                                           "role",
	} {
		if _, err := ParseDataset(strings.NewReader(line), FormatAuto); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: %v; want an error naming line 1 and %s", line, err, want)
		}
	}
}
