package hftokenizer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeHub lays out a Hugging Face cache as huggingface_hub writes it:
// snapshots hold symlinks into blobs, refs/main names the current one.
func fakeHub(t *testing.T) string {
	t.Helper()
	hub := filepath.Join(t.TempDir(), "hub")
	repo := filepath.Join(hub, "models--meta-llama--Llama-3.1-8B-Instruct")
	for _, d := range []string{"blobs", "refs", "snapshots/aaa111", "snapshots/bbb222"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(repo, "blobs", "f00d"), []byte(`{"model": `+tinyBPE+`}`), 0o644)
	os.Symlink("../../blobs/f00d", filepath.Join(repo, "snapshots", "bbb222", "tokenizer.json"))
	os.Symlink("../../blobs/f00d", filepath.Join(repo, "snapshots", "aaa111", "tokenizer.json"))
	os.WriteFile(filepath.Join(repo, "refs", "main"), []byte("bbb222\n"), 0o644)
	// A model that ships only SentencePiece's file.
	sp := filepath.Join(hub, "models--org--spm-only", "snapshots", "ccc")
	os.MkdirAll(sp, 0o755)
	os.WriteFile(filepath.Join(sp, "tokenizer.model"), []byte("x"), 0o644)
	return hub
}

func TestResolve(t *testing.T) {
	hub := fakeHub(t)
	env := func(home string) func(string) string {
		return func(k string) string {
			switch k {
			case "HF_HUB_CACHE":
				return hub
			case "HOME":
				return home
			}
			return ""
		}
	}(t.TempDir())
	got, err := Resolve("meta-llama/Llama-3.1-8B-Instruct", env)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "bbb222") {
		t.Errorf("resolved %s, want the snapshot refs/main names", got)
	}
	if tok, err := Load(context.Background(), got); err != nil || tok.Count("ab") != 1 {
		t.Errorf("loading the resolved file: %v", err)
	}
	// A folder and a plain file resolve to themselves.
	dir := filepath.Dir(got)
	if p, err := Resolve(dir, env); err != nil || p != filepath.Join(dir, "tokenizer.json") {
		t.Errorf("folder: %s %v", p, err)
	}
	if p, err := Resolve(got, env); err != nil || p != got {
		t.Errorf("file: %s %v", p, err)
	}
	for _, tc := range []struct{ arg, want string }{
		{"meta-llama/Llama-3.3-70B-Instruct", "not in the Hugging Face cache"},
		{"org/spm-only", "tokenizer.model"},
		{"./no/such/file.json", "no such file"},
		{"a/b/c", "no such file"},
	} {
		if _, err := Resolve(tc.arg, env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want it to say %q", tc.arg, err, tc.want)
		}
	}
}

func TestHubCacheFollowsHuggingFaceRules(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HF_HUB_CACHE": "/c", "HF_HOME": "/h"}, "/c"},
		{map[string]string{"HF_HOME": "/h"}, "/h/hub"},
		{map[string]string{"XDG_CACHE_HOME": "/x"}, "/x/huggingface/hub"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.cache/huggingface/hub"},
	} {
		if got := hubCache(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.env, got, tc.want)
		}
	}
}
