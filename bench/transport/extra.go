package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kneebench/knee/workload"
)

// readExtra reads --extra-body: its fields, sorted, and what they say of
// the budget and of ignoring EOS.
func (c *Client) readExtra(body []byte, budget string) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("extra body must be a JSON object: %v", err)
	}
	for k, v := range m {
		c.extra = append(c.extra, extraField{k, v})
	}
	if v, ok := fieldAt(m, budget); ok {
		c.extraMaxTokens = 0
		_ = json.Unmarshal(v, &c.extraMaxTokens)
	}
	c.extraIgnoreEOS = extraIgnoreEOS(m)
	for _, stop := range []string{"stop", "stop_token_ids", "stop_sequences", "sampling_params.stop"} {
		if _, ok := fieldAt(m, stop); ok {
			// A stop the body names ends an answer early by right.
			c.extraIgnoreEOS = 0
		}
	}
	sort.Slice(c.extra, func(i, j int) bool { return c.extra[i].key < c.extra[j].key })
	return nil
}

// extraIgnoreEOS reads an --extra-body's ignore_eos, where chat's
// servers and SGLang's /generate take it: 1 when true, 0 when set
// otherwise, -1 when not set.
func extraIgnoreEOS(m map[string]json.RawMessage) int {
	for _, path := range []string{"ignore_eos", "sampling_params.ignore_eos"} {
		if v, ok := fieldAt(m, path); ok {
			if bytes.Equal(bytes.TrimSpace(v), []byte("true")) {
				return 1
			}
			return 0
		}
	}
	return -1
}

// asksFull says r goes out asking for its whole max_tokens (ignore_eos
// true), from the request, the target or --extra-body, which wins; a
// stop --extra-body names makes no answer ask for the whole, nor does a
// pooling kind's.
func (c *Client) asksFull(r *workload.Request) bool {
	if !c.t.Endpoint.Kind().Streamed {
		// A pooling model generates nothing: there is no budget to fill.
		return false
	}
	if c.extraIgnoreEOS >= 0 {
		return c.extraIgnoreEOS == 1
	}
	return r.IgnoreEOS || c.t.IgnoreEOS
}

// withFields is a mix class's body fields over --extra-body's: the
// class's value wins where both set a key.
func withFields(extra []extraField, fields []workload.BodyField) []extraField {
	out := make([]extraField, 0, len(extra)+len(fields))
	for _, f := range fields {
		out = append(out, extraField{f.Key, f.Value})
	}
	for _, e := range extra {
		if !slices.ContainsFunc(fields, func(f workload.BodyField) bool { return f.Key == e.key }) {
			out = append(out, e)
		}
	}
	return out
}

// fieldAt is the value at a dotted path of a JSON object's fields
// ("sampling_params.max_new_tokens"), when there is one.
func fieldAt(m map[string]json.RawMessage, path string) (json.RawMessage, bool) {
	if path == "" {
		return nil, false
	}
	head, rest, nested := strings.Cut(path, ".")
	v, ok := m[head]
	if !ok || !nested {
		return v, ok
	}
	var inner map[string]json.RawMessage
	if json.Unmarshal(v, &inner) != nil {
		return nil, false
	}
	return fieldAt(inner, rest)
}
