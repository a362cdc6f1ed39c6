package hftokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

const (
	// maxDepth bounds nested Sequences: real files nest one level.
	maxDepth = 8
	// maxID bounds token ids and vocabulary sizes: real vocabularies are
	// under a million.
	maxID = 1 << 24
)

// Parse reads a tokenizer.json's content. Every error says which part of
// the file is wrong or not supported; no input makes it panic.
func Parse(data []byte) (tok *Tokenizer, err error) {
	defer func() {
		// A bug here must not take the whole run down with a stack trace.
		if r := recover(); r != nil {
			tok, err = nil, fmt.Errorf("tokenizer.json: unreadable (%v)", r)
		}
	}()
	var f struct {
		Version       string            `json:"version"`
		AddedTokens   []json.RawMessage `json:"added_tokens"`
		Normalizer    json.RawMessage   `json:"normalizer"`
		PreTokenizer  json.RawMessage   `json:"pre_tokenizer"`
		Model         json.RawMessage   `json:"model"`
		PostProcessor json.RawMessage   `json:"post_processor"`
		Decoder       json.RawMessage   `json:"decoder"`
		Truncation    json.RawMessage   `json:"truncation"`
		Padding       json.RawMessage   `json:"padding"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %v", err)
	}
	if isNull(f.Model) {
		return nil, errors.New(`not a tokenizer.json: no "model"`)
	}
	t := &Tokenizer{}
	if t.model, err = parseModel(f.Model); err != nil {
		return nil, err
	}
	if t.norm, err = parseNormalizer(f.Normalizer, 0); err != nil {
		return nil, err
	}
	if t.pre, err = parsePreTokenizer(f.PreTokenizer, 0); err != nil {
		return nil, err
	}
	added := make([]addedToken, 0, len(f.AddedTokens))
	for i, raw := range f.AddedTokens {
		var a addedToken
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("added_tokens[%d]: %v", i, err)
		}
		if a.ID < 0 || a.ID > maxID {
			return nil, fmt.Errorf("added_tokens[%d]: id %d is outside 0..%d", i, a.ID, maxID)
		}
		added = append(added, a)
	}
	t.added = newAddedVocab(added, t.norm, t.model)
	return t, nil
}

func parseModel(raw json.RawMessage) (model, error) {
	typ, err := typeOf(raw, "model")
	if err != nil {
		return nil, err
	}
	switch typ {
	case "BPE", "":
		// Files written before the type field existed are BPE when they
		// carry merges.
		if typ == "" && !hasKey(raw, "merges") {
			return nil, errors.New(`model: no "type", and no merges to say it is BPE`)
		}
		return parseBPE(raw)
	case "Unigram":
		return parseUnigram(raw)
	case "WordPiece":
		return parseWordPiece(raw)
	case "WordLevel":
		return parseWordLevel(raw)
	}
	return nil, fmt.Errorf("model %q is not one knee knows (BPE, Unigram, WordPiece, WordLevel)", typ)
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// typeOf returns a component's "type", checking that it is an object.
func typeOf(raw json.RawMessage, what string) (string, error) {
	var v map[string]json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("%s: not a JSON object", what)
	}
	t, ok := v["type"]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(t, &s); err != nil {
		return "", fmt.Errorf("%s: \"type\" is not a string", what)
	}
	return s, nil
}

func hasKey(raw json.RawMessage, key string) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(raw, &v) == nil && v[key] != nil
}

// ignoredFields are fields that change offsets or decoding, never which
// tokens text becomes.
var ignoredFields = map[string]bool{"type": true, "trim_offsets": true, "str_rep": true}

// strictUnmarshal decodes a component and refuses fields it does not
// know: a field added by a later version of the library may change the
// encoding, and a count that silently ignored it would look right.
func strictUnmarshal(raw json.RawMessage, v any, what string) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("%s: not a JSON object", what)
	}
	for k := range fields {
		if ignoredFields[k] {
			delete(fields, k)
		}
	}
	clean, _ := json.Marshal(fields)
	dec := json.NewDecoder(bytes.NewReader(clean))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := err.Error()
		if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			return fmt.Errorf("%s: field %s is not one knee knows, so it cannot count exactly", what, f)
		}
		return fmt.Errorf("%s: %s", what, strings.TrimPrefix(msg, "json: "))
	}
	return nil
}
