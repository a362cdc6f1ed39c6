package transport

import (
	"bytes"
	"reflect"
	"testing"
)

// scanChunkByKey is the earlier scanner, one search of the payload per
// key: simple enough to trust, and the reference the one-pass scanChunk
// must agree with.
func scanChunkByKey(p []byte, c *chunk) {
	*c = chunk{}
	c.content = nonEmptyAfter(p, keyContent) || nonEmptyAfter(p, keyText) ||
		nonEmptyAfter(p, keyReasoning) || nonEmptyAfter(p, keyReason2)
	if i := bytes.Index(p, keyFinish); i >= 0 {
		v := skipSpace(p[i+len(keyFinish):])
		c.finished = len(v) > 0 && v[0] == '"'
	}
	if i := bytes.Index(p, keyUsage); i >= 0 {
		u := skipSpace(p[i+len(keyUsage):])
		if len(u) > 0 && u[0] == '{' {
			c.usage = true
			var okIn bool
			c.promptTokens, okIn = intAfter(u, keyPrompt)
			if (!okIn && bytes.Contains(u, keyPrompt)) || c.promptTokens > MaxPlausiblePromptTokens {
				c.promptOdd, c.promptRaw, c.promptTokens = true, rawAfter(u, keyPrompt), 0
			}
			var ok bool
			c.outTokens, ok = intAfter(u, keyCompl)
			c.usageOdd = !ok && bytes.Contains(u, keyCompl)
			c.cachedTokens, c.cachedSeen = intAfter(u, keyCached)
			if c.cachedTokens > MaxPlausiblePromptTokens {
				c.cachedTokens, c.cachedSeen = 0, false
			}
		}
	}
	if i := bytes.Index(p, keyTimings); i >= 0 {
		if v := skipSpace(p[i+len(keyTimings):]); len(v) > 0 && v[0] == '{' {
			c.timings = true
			if c.cacheN, _ = intAfter(v, keyCacheN); c.cacheN > MaxPlausiblePromptTokens {
				c.cacheN = 0
			}
			c.predictedN, _ = intAfter(v, keyPredN)
			c.promptMs = floatAfter(v, keyPromptMs)
			c.predictedMs = floatAfter(v, keyPredMs)
		}
	}
	if i := bytes.Index(p, keyError); i >= 0 && !bytes.Contains(p, keyChoices) {
		v := skipSpace(p[i+len(keyError):])
		c.hasError = len(v) > 0 && (v[0] == '{' || v[0] == '"')
	}
}

func nonEmptyAfter(p, key []byte) bool {
	for {
		i := bytes.Index(p, key)
		if i < 0 {
			return false
		}
		if nonEmptyValue(p[i+len(key):]) {
			return true
		}
		p = p[i+len(key):]
	}
}

// FuzzScanChunk checks the one-pass scanner against the reference on any
// payload.
func FuzzScanChunk(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"delta":{"role":"assistant","content":""}}]}`,
		`{"choices":[{"delta":{"content":"say \"content\": \"\""},"finish_reason":null}]}`,
		`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":8}}}`,
		`{"error":{"message":"x"},"usage":null,"text":"","reasoning":"r"}`,
		`{"finish_reason":null,"finish_reason":"stop","content":"","content":"a"}`,
		`""content":"x`,
		`{"choices":[],"usage":{"completion_tokens":-3},"timings":{"cache_n":5,"prompt_ms":1.5e1,"predicted_ms":"x","predicted_n":4}}`,
		`{"timings":1,"timings":{"cache_n":2}}`,
		`{"usage":{"prompt_tokens":-4,"completion_tokens":2}}`,
		`"usage":{"prompt_tokens":`,
		`{"usage":{"prompt_tokens":9000000000000000000,"prompt_tokens_details":{"cached_tokens":9000000000000000000}}}`,
		`{"timings":{"cache_n":99999999999}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		var got, want chunk
		scanChunk(p, &got)
		scanChunkByKey(p, &want)
		if !reflect.DeepEqual(got.base(), want) {
			t.Fatalf("scanChunk(%q) = %+v, reference %+v", p, got, want)
		}
	})
}

// BenchmarkScanChunk compares the one-pass scanner with the reference on a
// token chunk as knee sim writes it.
func BenchmarkScanChunk(b *testing.B) {
	p := []byte(`{"id":"chatcmpl-knee-1","object":"chat.completion.chunk","created":1795951376,"model":"knee-sim-instant","choices":[{"index":0,"delta":{"content":" today"},"logprobs":null,"finish_reason":null}]}`)
	var c chunk
	b.Run("one-pass", func(b *testing.B) {
		for b.Loop() {
			scanChunk(p, &c)
		}
	})
	b.Run("by-key", func(b *testing.B) {
		for b.Loop() {
			scanChunkByKey(p, &c)
		}
	})
}

// TestImplausibleCountsUnreported: a usage count no server means (a bug,
// a misread field) is not summed: a prompt's is odd and said so, a cached
// or reasoning count past it is taken as unreported, where cached_tokens
// of 9e18 once totalled 180 trillion cached tokens over 20 requests.
func TestImplausibleCountsUnreported(t *testing.T) {
	var c chunk
	scanChunk([]byte(`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,`+
		`"prompt_tokens_details":{"cached_tokens":9000000000000000000},`+
		`"completion_tokens_details":{"reasoning_tokens":99999999999}}}`), &c)
	if !c.usage || c.promptTokens != 12 || c.outTokens != 3 || c.cachedSeen || c.cachedTokens != 0 ||
		c.reasoningSeen || c.reasoningTokens != 0 {
		t.Errorf("%+v: want 12 prompt and 3 completion tokens, no cached or reasoning count", c)
	}
	scanChunk([]byte(`{"choices":[],"usage":{"prompt_tokens":9000000000000000000,"completion_tokens":3}}`), &c)
	if !c.promptOdd || c.promptTokens != 0 {
		t.Errorf("%+v: want the prompt count odd and not summed", c)
	}
}
