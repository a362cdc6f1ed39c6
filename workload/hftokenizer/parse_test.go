package hftokenizer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const tinyBPE = `{"type":"BPE","vocab":{"a":0,"b":1,"ab":2,"<unk>":3},"merges":["a b"],"unk_token":"<unk>"}`

// TestMalformedFiles: every broken shape is an error naming what is
// wrong, never a panic and never a tokenizer that would count wrong.
func TestMalformedFiles(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"empty object", `{}`, `no "model"`},
		{"not JSON", `{"model":`, "not a tokenizer.json"},
		{"an array", `[1,2]`, "not a tokenizer.json"},
		{"null model", `{"model": null}`, `no "model"`},
		{"numeric type", `{"model": {"type": 5}}`, `"type" is not a string`},
		{"unknown model", `{"model": {"type": "Magic"}}`, `model "Magic"`},
		{"BPE vocab as a list", `{"model": {"type":"BPE","vocab":[["a",0]],"merges":[]}}`, `"vocab" must be an object`},
		{"BPE without vocab", `{"model": {"type":"BPE","merges":[]}}`, `missing "vocab"`},
		{"merge of unknown tokens", `{"model": {"type":"BPE","vocab":{"a":0},"merges":["a b"]}}`, "not in the vocabulary"},
		{"merge of one token", `{"model": {"type":"BPE","vocab":{"a":0},"merges":["a"]}}`, "two tokens"},
		{"merge as a number", `{"model": {"type":"BPE","vocab":{"a":0},"merges":[7]}}`, "neither"},
		{"negative id", `{"model": {"type":"BPE","vocab":{"a":-1},"merges":[]}}`, "outside"},
		{"dropout", `{"model": {"type":"BPE","dropout":0.1,"vocab":{"a":0},"merges":[]}}`, "random"},
		{"unknown unk", `{"model": {"type":"BPE","vocab":{"a":0},"merges":[],"unk_token":"<unk>"}}`, "unk_token"},
		{"unknown field", `{"model": {"type":"BPE","vocab":{"a":0},"merges":[],"shiny":true}}`, `field "shiny"`},
		{"WordPiece without vocab", `{"model": {"type":"WordPiece","unk_token":"[UNK]"}}`, `missing "vocab"`},
		{"WordPiece without its unk", `{"model": {"type":"WordPiece","vocab":{"a":0}}}`, "unk_token"},
		{"Unigram unk_id as a string", `{"model": {"type":"Unigram","unk_id":"0","vocab":[["a",-1]]}}`, "unk_id"},
		{"Unigram unk_id out of range", `{"model": {"type":"Unigram","unk_id":3,"vocab":[["a",-1]]}}`, "not in the vocabulary"},
		{"Unigram empty", `{"model": {"type":"Unigram","vocab":[]}}`, "empty"},
		{"Unigram bad entry", `{"model": {"type":"Unigram","vocab":[["a"]]}}`, "not [\"piece\", score]"},
		{"empty Metaspace replacement", `{"model": ` + tinyBPE + `, "pre_tokenizer": {"type":"Metaspace","replacement":""}}`, "one character"},
		{"two-character Metaspace replacement", `{"model": ` + tinyBPE + `, "pre_tokenizer": {"type":"Metaspace","replacement":"ab"}}`, "one character"},
		{"bad prepend scheme", `{"model": ` + tinyBPE + `, "pre_tokenizer": {"type":"Metaspace","replacement":"_","prepend_scheme":"sometimes"}}`, "prepend_scheme"},
		{"bad split behavior", `{"model": ` + tinyBPE + `, "pre_tokenizer": {"type":"Split","pattern":{"String":" "},"behavior":"Eaten"}}`, "behavior"},
		{"bad regex", `{"model": ` + tinyBPE + `, "pre_tokenizer": {"type":"Split","pattern":{"Regex":"(?<"},"behavior":"Isolated"}}`, "pattern"},
		{"pattern of neither kind", `{"model": ` + tinyBPE + `, "pre_tokenizer": {"type":"Split","pattern":{},"behavior":"Isolated"}}`, "pattern"},
		{"unknown pre-tokenizer", `{"model": ` + tinyBPE + `, "pre_tokenizer": {"type":"UnicodeScripts"}}`, `"UnicodeScripts"`},
		{"unknown normalizer", `{"model": ` + tinyBPE + `, "normalizer": {"type":"Precompiled","precompiled_charsmap":"AA=="}}`, "Precompiled"},
		{"normalizer not an object", `{"model": ` + tinyBPE + `, "normalizer": 3}`, "not a JSON object"},
		{"sequence of numbers", `{"model": ` + tinyBPE + `, "normalizer": {"type":"Sequence","normalizers":[1]}}`, "not a JSON object"},
		{"deep nesting", `{"model": ` + tinyBPE + `, "normalizer": ` + strings.Repeat(`{"type":"Sequence","normalizers":[`, 12) + `{"type":"NFC"}` + strings.Repeat(`]}`, 12) + `}`, "too deep"},
		{"added token with a bad id", `{"model": ` + tinyBPE + `, "added_tokens": [{"id": -4, "content": "x"}]}`, "outside"},
		{"added token not an object", `{"model": ` + tinyBPE + `, "added_tokens": [5]}`, "added_tokens[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := Parse([]byte(tc.file))
			if err == nil {
				t.Fatalf("accepted; Count(\"ab\") = %d", tok.Count("ab"))
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// TestOddButValid: files the library reads must read here too.
func TestOddButValid(t *testing.T) {
	for _, tc := range []struct {
		name, file, text string
		want             int
	}{
		{"bare BPE", `{"model": ` + tinyBPE + `}`, "abab", 2},
		{"merges as pairs", `{"model": {"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":[["a","b"]]}}`, "ab", 1},
		{"unknown characters fused", `{"model": {"type":"BPE","vocab":{"a":0,"<unk>":1},"merges":[],"unk_token":"<unk>","fuse_unk":true}}`, "axyza", 3},
		{"unknown characters dropped without an unk", `{"model": {"type":"BPE","vocab":{"a":0},"merges":[]}}`, "axa", 2},
		{"null normalizer and pre-tokenizer", `{"normalizer": null, "pre_tokenizer": null, "model": ` + tinyBPE + `}`, "ab", 1},
		{"empty added token ignored", `{"added_tokens":[{"id":9,"content":""}], "model": ` + tinyBPE + `}`, "ab", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := Parse([]byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := tok.Count(tc.text); got != tc.want {
				t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
			}
		})
	}
}

func TestLoadRefusesFoldersAndHugeFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "folder") {
		t.Errorf("a folder: %v", err)
	}
	if _, err := Load(context.Background(), filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file was read")
	}
	if _, err := Load(context.Background(), "/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a tokenizer.json") {
		t.Errorf("/dev/zero: %v", err)
	}
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, nil, 0o644)
	if _, err := Load(context.Background(), empty); err == nil {
		t.Error("an empty file was read")
	}
}

// FuzzParse: no file makes the reader panic, and whatever it accepts
// encodes any text without panicking.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"model": `+tinyBPE+`}`), "abba")
	f.Add([]byte(`{"model": {"type":"Unigram","unk_id":0,"vocab":[["<unk>",0],["a",-1],["ab",-1.5]]}, "pre_tokenizer": {"type":"Metaspace","replacement":"_"}}`), "ab ab")
	f.Add([]byte(`{"model": {"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"a":1,"##b":2}}, "normalizer": {"type":"BertNormalizer"}, "pre_tokenizer": {"type":"BertPreTokenizer"}}`), "AB, a")
	f.Add([]byte(`{"added_tokens":[{"id":5,"content":"<x>","lstrip":true,"rstrip":true,"single_word":true}],"normalizer":{"type":"Sequence","normalizers":[{"type":"NFKC"},{"type":"Lowercase"},{"type":"Replace","pattern":{"Regex":"\\s+"},"content":" "}]},"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\p{N}{1,3}"},"behavior":"Isolated"},{"type":"ByteLevel","add_prefix_space":true}]},"model":`+tinyBPE+`}`), " <x> 12345 ab")
	f.Fuzz(func(t *testing.T, file []byte, text string) {
		tok, err := Parse(file)
		if err != nil {
			return
		}
		tok.Count(text)
	})
}
