package workload

import (
	"os"
	"strings"
	"testing"
)

// FuzzParseDataset: a dataset is foreign data (peers' files, traces,
// hand-edited JSONL). Whatever the bytes and the format asked, parsing
// ends in entries or an error, never a panic; what it accepts holds no
// negative length, a trace's schedule no negative or reversed offset, and
// every conversation at least one turn.
func FuzzParseDataset(f *testing.F) {
	seeds := []string{
		`{"prompt":"a","max_tokens":5}`,
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}],"max_tokens":7}`,
		`[{"conversations":[{"from":"human","value":"<image>\nq"},{"from":"gpt","value":"r"}],"image":"a.png"}]`,
		`{"session_id":"s","turns":[{"text":"hi","output_length":4},{"text":"more","delay":500}]}`,
		`{"timestamp": 27482, "input_length": 1030, "output_length": 8, "hash_ids": [0, 1, 2]}`,
		`{"text":"a","delay":100}` + "\n" + `{"text":"b","delay":-250}`,
		`{"prompt_0":"a","prompt_1":"b","output_tokens_count":3}`,
		`{"question":[[{"role":"user","content":"x"}]],"function":[{"name":"f","parameters":{}}]}`,
		"\ufeff{\"prompt\":\"bom\"}",
		`{"timestamp": 1e300, "input_length": 1e300, "output_length": -1}`,
	}
	if b, err := os.ReadFile("testdata/sharegpt.json"); err == nil {
		seeds = append(seeds, string(b))
	}
	for i, s := range seeds {
		f.Add(s, uint8(i))
	}
	f.Fuzz(func(t *testing.T, text string, pick uint8) {
		format := Formats[int(pick)%len(Formats)]
		p, err := ParseDataset(strings.NewReader(text), format)
		if err != nil {
			return
		}
		checkParsed(t, p)
	})
}

func checkParsed(t *testing.T, p *ParsedDataset) {
	t.Helper()
	for _, e := range p.Entries {
		if e.MaxTokens < 0 || e.InputLength < 0 || e.Timestamp < 0 {
			t.Fatalf("line %d: max_tokens %d, input %d, timestamp %v", e.Line, e.MaxTokens, e.InputLength, e.Timestamp)
		}
	}
	for _, c := range p.Conversations {
		if len(c.Turns) == 0 {
			t.Fatalf("line %d: a conversation of no turn", c.Line)
		}
		for _, turn := range c.Turns {
			if turn.MaxTokens < 0 || turn.Delay < 0 {
				t.Fatalf("line %d: turn max_tokens %d, delay %v", c.Line, turn.MaxTokens, turn.Delay)
			}
		}
	}
	if !p.Timed {
		return
	}
	for i, at := range TraceSchedule(p.Entries, 1) {
		if at < 0 {
			t.Fatalf("entry %d is due %v before the trace starts", i, at)
		}
	}
}
