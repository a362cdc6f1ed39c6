package hftokenizer

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kneebench/knee/results/input"
)

// Resolve turns what a user passes as --tokenizer into the path of a
// tokenizer.json: the file itself, a model folder holding one, or a Hugging
// Face model id ("meta-llama/Llama-3.1-8B-Instruct", as vLLM, GuideLLM and
// AIPerf take it) found in the local Hugging Face cache, where a machine
// that has served the model keeps it. Nothing is fetched. getenv reads the
// environment ($HF_HUB_CACHE, $HF_HOME, $XDG_CACHE_HOME, $HOME).
func Resolve(arg string, getenv func(string) string) (string, error) {
	if st, err := os.Stat(arg); err == nil {
		if !st.IsDir() {
			return arg, nil
		}
		p := filepath.Join(arg, "tokenizer.json")
		if _, err := os.Stat(p); err != nil {
			return "", input.Unreadable(fmt.Errorf("%s is a folder without a tokenizer.json%s", arg, otherFiles(arg)))
		}
		return p, nil
	}
	hub := hubCache(getenv)
	if !looksLikeModelID(arg) {
		return "", input.Unreadable(fmt.Errorf("%s: no such file; pass a tokenizer.json, a model folder or a Hugging Face model id", arg))
	}
	repo := filepath.Join(hub, "models--"+strings.ReplaceAll(arg, "/", "--"))
	snaps := filepath.Join(repo, "snapshots")
	if _, err := os.Stat(snaps); err != nil {
		return "", input.Unreadable(fmt.Errorf("%s: no such file, and the model is not in the Hugging Face cache (%s); pass the path of its tokenizer.json (huggingface-cli download %s tokenizer.json fetches it)", arg, hub, arg))
	}
	// refs/main names the snapshot a plain from_pretrained would load.
	if ref, err := os.ReadFile(filepath.Join(repo, "refs", "main")); err == nil {
		p := filepath.Join(snaps, strings.TrimSpace(string(ref)), "tokenizer.json")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	entries, err := os.ReadDir(snaps)
	if err != nil {
		return "", fmt.Errorf("%s: reading the Hugging Face cache: %v", arg, err)
	}
	type snap struct {
		path string
		mod  int64
	}
	var found []snap
	for _, e := range entries {
		p := filepath.Join(snaps, e.Name(), "tokenizer.json")
		if st, err := os.Stat(p); err == nil {
			found = append(found, snap{p, st.ModTime().UnixNano()})
		}
	}
	if len(found) == 0 {
		return "", fmt.Errorf("%s is in the Hugging Face cache (%s) but none of its snapshots has a tokenizer.json%s", arg, snaps, otherFiles(filepath.Join(snaps, firstName(entries))))
	}
	sort.Slice(found, func(i, j int) bool { return found[i].mod > found[j].mod })
	return found[0].path, nil
}

// hubCache is where huggingface_hub keeps models, by its own rules.
func hubCache(getenv func(string) string) string {
	for _, k := range []string{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"} {
		if v := getenv(k); v != "" {
			return v
		}
	}
	if v := getenv("HF_HOME"); v != "" {
		return filepath.Join(v, "hub")
	}
	if v := getenv("XDG_CACHE_HOME"); v != "" {
		return filepath.Join(v, "huggingface", "hub")
	}
	return filepath.Join(getenv("HOME"), ".cache", "huggingface", "hub")
}

// looksLikeModelID accepts "name" and "org/name" of the hub's characters.
func looksLikeModelID(s string) bool {
	parts := strings.Split(s, "/")
	if len(parts) > 2 || s == "" {
		return false
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return false
		}
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
				return false
			}
		}
	}
	return true
}

func firstName(es []fs.DirEntry) string {
	if len(es) == 0 {
		return ""
	}
	return es[0].Name()
}

// otherFiles says what a folder has instead, when it has a SentencePiece
// model: the one case users meet.
func otherFiles(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.model")); err == nil {
		return " (it has a SentencePiece tokenizer.model; knee reads tokenizer.json, which transformers' save_pretrained writes)"
	}
	return ""
}
