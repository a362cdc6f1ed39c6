package content

import "sync/atomic"

// UnreadToken stands for every token of an answer no one reads
// (GenRequest.AnswerUnread). It is no word of any prompt, so an answer of
// it never continues another request's prompt.
const UnreadToken = "<|unread|>"

// unreadPlan is the plan of an answer no one reads, when its length and
// end follow from the answer and the limit alone. A synthetic answer's
// length is otherwise drawn from the digest over the prompt, the cost
// this skips (with the answer's draws): when the answer asks for more
// than the limit, or for one length, or ignore_eos pads it to max_tokens,
// the draw cannot change it. Its tokens are UnreadToken: the scheduler
// core chains a block's hash from the prompt's, so the answer's blocks
// are as distinct from other requests' as the digest's words make them,
// and the same prompt still gives the same blocks: a prediction of
// single requests is the same with either.
func unreadPlan(ans *compiledAnswer, g *GenRequest, limit int) (*Plan, bool) {
	if !ans.synthetic || ans.think != nil || ans.callArgs != nil {
		return nil, false
	}
	room := max(limit, 0)
	switch {
	case g.IgnoreEOS && g.MaxTokens != nil, ans.min > limit:
		return &Plan{Tokens: unreadTokens(room), FinishReason: "length", Unread: true}, true
	case ans.min == ans.max:
		return &Plan{Tokens: unreadTokens(ans.min), FinishReason: "stop", Unread: true}, true
	}
	return nil, false
}

// unreadShared holds UnreadToken repeated, grown as longer answers ask;
// the slices handed out share it and are never written.
var unreadShared atomic.Pointer[[]string]

// unreadTokens is n UnreadTokens, capped at n so an append copies them.
func unreadTokens(n int) []string {
	if n <= 0 {
		return nil
	}
	if p := unreadShared.Load(); p != nil && len(*p) >= n {
		return (*p)[:n:n]
	}
	s := make([]string, max(n, 1024))
	for i := range s {
		s[i] = UnreadToken
	}
	unreadShared.Store(&s)
	return s[:n:n]
}
