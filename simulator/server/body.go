package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// decodeObject reads body, one JSON object, into v as vLLM's OpenAI
// server refuses what is not one: invalid UTF-8, a field of the wrong
// type (named), trailing data or anything else is a 400.
func decodeObject(body []byte, v any) error {
	if !utf8.Valid(body) {
		return badRequest("", "the request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	err := dec.Decode(v)
	if err == nil && dec.More() {
		return badRequest("", "the request body has trailing data after the JSON object")
	}
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return badRequest(te.Field, "invalid type for '%s': expected %s", te.Field, jsonKind(te.Type.Kind().String()))
	}
	return badRequest("", "the request body is not a valid JSON object: %v", err)
}
