#!/usr/bin/python3
"""Write the tokenizer.json of a GPT-2-style GGUF model (tokenizer.ggml.model
"gpt2", pre "default"), as llama.cpp tokenizes it, so knee's --tokenizer can
count what llama-server counts.

Usage: PYTHONPATH=$W/src/gguf-py python3 gguf_tokenizer.py MODEL.gguf OUT.json

The pre-tokenizer is llama.cpp's "default" one (src/llama-vocab.cpp): a
punctuation split, GPT-2's split, digits, then byte-level encoding.
"""
import json
import sys

from gguf import GGUFReader

model, out = sys.argv[1], sys.argv[2]
r = GGUFReader(model)


def field(name):
    f = r.fields[name]
    return [bytes(f.parts[i]).decode("utf-8") for i in f.data]


def scalar(name):
    f = r.fields[name]
    return f.parts[f.data[0]].tolist()[0]


tokens = field("tokenizer.ggml.tokens")
merges = field("tokenizer.ggml.merges")
types = r.fields["tokenizer.ggml.token_type"]
types = [types.parts[i].tolist()[0] for i in types.data]
assert bytes(r.fields["tokenizer.ggml.model"].parts[-1]).decode() == "gpt2"
CONTROL = 3
added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
          "normalized": False, "special": True} for i, t in enumerate(tokens) if types[i] == CONTROL]


def split(pattern):
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}


doc = {
    "version": "1.0",
    "truncation": None,
    "padding": None,
    "added_tokens": added,
    "normalizer": None,
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        split("[\\p{P}\\$\\+<=>\\^~\\|]+"),
        split("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"),
        split("\\p{N}+"),
        split("[0-9][0-9][0-9]"),
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
    ]},
    "post_processor": None,
    "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
              "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
              "vocab": {t: i for i, t in enumerate(tokens)}, "merges": merges},
}
with open(out, "w", encoding="utf-8") as f:
    json.dump(doc, f, ensure_ascii=False)
print(f"wrote {out}: {len(tokens)} tokens, {len(merges)} merges, {len(added)} special")
