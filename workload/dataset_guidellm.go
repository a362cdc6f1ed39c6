package workload

import (
	"encoding/json"
	"fmt"
	"strings"
)

// GuideLLM finds a dataset's columns by name (its GenerativeColumnMapper):
// the first of each list present, in the name's plural (-s, -es) or
// case variants too. knee reads a prompt line's columns the same way.
var (
	guideTexts    = []string{"prompt", "instruction", "question", "input", "context", "content", "conversation", "turn", "text"}
	guidePrefixes = []string{"system_prompt", "system", "prefix"}
)

// guideColumn returns the first column of names present in keys, as
// GuideLLM matches them: each name, its plurals, each lower, upper and
// capitalised.
func guideColumn(keys map[string]json.RawMessage, names []string) (string, bool) {
	for _, name := range names {
		for _, plural := range []string{name, name + "s", name + "es"} {
			for _, v := range []string{plural, strings.ToLower(plural), strings.ToUpper(plural), strings.ToUpper(plural[:1]) + plural[1:]} {
				if _, ok := keys[v]; ok {
					return v, true
				}
			}
		}
	}
	return "", false
}

// guideTurns returns a line's numbered text columns (prompt_0, prompt_1,
// …: a multi-turn row), in order, for the first text name that has a
// column numbered 0.
func guideTurns(keys map[string]json.RawMessage) []string {
	for _, name := range guideTexts {
		var cols []string
		for k := 0; ; k++ {
			col := fmt.Sprintf("%s_%d", name, k)
			if _, ok := keys[col]; !ok {
				break
			}
			cols = append(cols, col)
		}
		if len(cols) > 0 {
			return cols
		}
	}
	return nil
}

// guidePrompt reads a GuideLLM prompt row: its text column (or numbered
// columns, a conversation's turns), its prefix column as the system
// prompt, and its output count.
func (r recordOf) guidePrompt() error {
	e := DatasetEntry{Line: r.n}
	var err error
	if e.MaxTokens, err = r.output(); err != nil {
		return err
	}
	var system string
	if col, ok := guideColumn(r.keys, guidePrefixes); ok {
		if system, _, err = r.str(col); err != nil {
			return err
		}
	}
	turns := guideTurns(r.keys)
	if col, ok := guideColumn(r.keys, guideTexts); ok && len(turns) == 0 {
		turns = []string{col}
	}
	if len(turns) == 0 {
		return r.errorf(`missing a text column (GuideLLM's names: %s)`, strings.Join(guideTexts, ", "))
	}
	c := Conversation{Line: r.n, ID: fmt.Sprintf("line-%d", r.n), System: system}
	for _, col := range turns {
		text, _, err := r.str(col)
		if err != nil {
			return err
		}
		if text == "" {
			return r.errorf("%q is empty", col)
		}
		c.Turns = append(c.Turns, ConversationTurn{User: text})
	}
	images, err := imagesOf(r.keys, r.errorf)
	if err != nil {
		return err
	}
	c.Turns[0].Images = images
	if len(c.Turns) > 1 {
		// A multi-turn row: each turn asks for its own numbered output
		// count (output_tokens_count_1), else the row's.
		for k := range c.Turns {
			if c.Turns[k].MaxTokens, err = r.turnOutput(k, e.MaxTokens); err != nil {
				return err
			}
		}
		r.p.Conversations = append(r.p.Conversations, c)
		r.p.Sessions = true
	}
	e.Messages = []Message{{Role: "user", Content: c.Turns[0].User, Images: append([]string(nil), images...)}}
	if system != "" {
		e.Messages = append([]Message{{Role: "system", Content: system}}, e.Messages...)
	}
	if err := r.stamp(&e); err != nil {
		return err
	}
	r.p.Entries = append(r.p.Entries, e)
	return nil
}

// isGuidePrompt reports whether a record's keys are a GuideLLM prompt
// row: a text column of GuideLLM's names ("text" aside, which AIPerf's
// single_turn reads), or numbered ones.
func isGuidePrompt(keys map[string]json.RawMessage) bool {
	if _, ok := guideColumn(keys, guideTexts[:len(guideTexts)-1]); ok {
		return true
	}
	return len(guideTurns(keys)) > 0
}

// turnOutput is turn k's output count from its numbered column
// (output_tokens_count_k, and the other output names so numbered), else
// the row's.
func (r recordOf) turnOutput(k, row int) (int, error) {
	for _, name := range outputKeys {
		col := fmt.Sprintf("%s_%d", name, k)
		raw, ok := r.keys[col]
		if !ok || string(raw) == "null" {
			continue
		}
		n, _, err := countOf(raw, col, MaxOutputTokens, r.errorf)
		return n, err
	}
	return row, nil
}
