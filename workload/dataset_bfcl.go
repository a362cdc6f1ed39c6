package workload

import (
	"encoding/json"
)

// bfcl reads a Berkeley Function Calling Leaderboard line, as vLLM's
// benchmark reads BFCL's single-turn categories: {"id", "question":
// [[{"role", "content"}, ...]], "function": [{name, description,
// parameters}, ...]}. The question's first turn is sent with the line's
// functions as its tools (BFCL's Python type names made JSON schema's).
// BFCL's multi-turn categories name their functions by class
// ("involved_classes") rather than list them, and are refused, saying
// so.
func (r recordOf) bfcl() error {
	fn, ok := r.keys["function"]
	if !ok {
		fn, ok = r.keys["functions"]
	}
	if !ok || string(fn) == "null" {
		if r.has("involved_classes") {
			return r.errorf(`a BFCL multi-turn line names its functions by class ("involved_classes"), which knee cannot expand: use a single-turn category, or --tools with a chat dataset`)
		}
		return r.errorf(`a BFCL line needs "function", its list of function schemas`)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(fn, &list); err != nil {
		// Some BFCL files give a lone function as an object.
		list = []json.RawMessage{fn}
	}
	tools, err := toolsOf(list)
	if err != nil {
		return r.errorf(`"function": %v`, err)
	}
	msgs, err := r.bfclQuestion()
	if err != nil {
		return err
	}
	e := DatasetEntry{Messages: msgs, Tools: tools, Line: r.n}
	return r.keep(e)
}

// bfclQuestion reads "question": a list of turns, each a list of
// messages (BFCL's shape; the first turn is sent), a flat list of
// messages, or a string (one user message).
func (r recordOf) bfclQuestion() ([]Message, error) {
	raw := r.keys["question"]
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, r.errorf(`"question" is empty`)
		}
		return []Message{{Role: "user", Content: s}}, nil
	}
	var turns [][]json.RawMessage
	if err := json.Unmarshal(raw, &turns); err != nil || len(turns) == 0 || len(turns[0]) == 0 {
		var flat []json.RawMessage
		if err := json.Unmarshal(raw, &flat); err != nil || len(flat) == 0 {
			return nil, r.errorf(`"question" must be a list of turns, each a list of {"role", "content"} messages`)
		}
		turns = [][]json.RawMessage{flat}
	}
	msgs := make([]Message, 0, len(turns[0]))
	for i, m := range turns[0] {
		var msg struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(m, &msg); err != nil {
			return nil, r.errorf(`question[0][%d] is not a {"role", "content"} message`, i)
		}
		switch msg.Role {
		case "system", "user", "developer":
		default:
			return nil, r.errorf("question[0][%d] has role %q (want system or user)", i, msg.Role)
		}
		text, images, err := content(msg.Content)
		if err != nil || text == "" || len(images) > 0 {
			return nil, r.errorf("question[0][%d].content must be a non-empty string", i)
		}
		msgs = append(msgs, Message{Role: msg.Role, Content: text})
	}
	return msgs, nil
}
