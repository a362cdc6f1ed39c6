package transport

import "bytes"

// A stream's usage object: the counts a server reports, read under each
// protocol's own keys and held to what a server can mean.

// readUsage reads a chunk's usage object, u.
func readUsage(u []byte, c *chunk) {
	if len(u) == 0 || u[0] != '{' {
		return
	}
	readCounts(u, c, chatKeys)
}

// usageKeys are where a protocol's usage object keeps its counts;
// reasoning is nil where it keeps none (SGLang's meta_info, which comes
// with every token: no search for it there).
type usageKeys struct{ prompt, completion, reasoning []byte }

var (
	chatKeys      = usageKeys{keyPrompt, keyCompl, keyReasonTok}
	responsesKeys = usageKeys{keyInTokens, keyOutTokens, keyReasonTok}
	generateKeys  = usageKeys{keyPrompt, keyCompl, nil}
)

// readCounts reads a usage object's counts, its prompt and completion
// under the protocol's keys. A prompt count no server means is odd (and
// said so); a cached or reasoning count past it is taken as unreported,
// so that one server's bug cannot outweigh every real request in a total
// (cached_tokens 9e18 once read as 180 trillion cached tokens). It
// reports whether the completion count was read.
func readCounts(u []byte, c *chunk, k usageKeys) bool {
	prompt, completion := k.prompt, k.completion
	c.usage = true
	var okIn bool
	c.promptTokens, okIn = intAfter(u, prompt)
	if !okIn && bytes.Contains(u, prompt) {
		c.oddPrompt(u, prompt)
	}
	c.checkPrompt(u, prompt)
	var okOut bool
	c.outTokens, okOut = intAfter(u, completion)
	c.usageOdd = !okOut && bytes.Contains(u, completion)
	c.cachedTokens, c.cachedSeen = plausibleCount(intAfter(u, keyCached))
	if k.reasoning != nil {
		c.reasoningTokens, c.reasoningSeen = plausibleCount(intAfter(u, k.reasoning))
	}
	return okOut
}

// checkPrompt marks a prompt count no server means as odd: said so, and
// not summed.
func (c *chunk) checkPrompt(u, key []byte) {
	if c.promptTokens > MaxPlausiblePromptTokens {
		c.oddPrompt(u, key)
	}
}

// oddPrompt marks the prompt count under key as one knee cannot read.
func (c *chunk) oddPrompt(u, key []byte) {
	c.promptOdd, c.promptRaw, c.promptTokens = true, rawAfter(u, key), 0
}

// plausibleCount keeps a count a server can mean, and drops one past
// MaxPlausiblePromptTokens as unreported.
func plausibleCount(n int, seen bool) (int, bool) {
	if n > MaxPlausiblePromptTokens {
		return 0, false
	}
	return n, seen
}
