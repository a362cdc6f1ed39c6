package server

import (
	"strconv"

	"github.com/kneebench/knee/workload/wire"
)

// thinkEnvelope sets up a chat stream's thinking tokens: how many of the
// answer's tokens are thought, and the event they stream in.
func (r *run) thinkEnvelope() {
	spec := r.reasoning
	if spec == nil || !r.chat || spec.Tokens == 0 {
		return
	}
	r.thinking = min(r.plan.ThoughtTokens, len(r.plan.Tokens))
	head := string(r.prefix[:len(r.prefix)-len(`"content":`)]) + strconv.Quote(spec.StreamField()) + ":"
	r.thinkPrefix = []byte(head)
	r.thinkEvent = append(make([]byte, chunkRoom, chunkRoom+len(head)+len(r.suffix)+64), head...)
}

// thinkTokenEvent is tokenEvent for a thinking token.
func (r *run) thinkTokenEvent(tok string) []byte {
	e := wire.AppendString(r.thinkEvent[:chunkRoom+len(r.thinkPrefix)], tok)
	e = append(e, r.suffix...)
	r.thinkEvent = e
	return e
}

// appendReasoningUsage adds the thinking tokens to a usage object being
// written, when the model reports them.
func (r *run) appendReasoningUsage(b []byte) []byte {
	spec := r.reasoning
	if spec == nil || !spec.ReportTokens || r.thinking == 0 {
		return b
	}
	b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(min(r.thinking, r.emitted)), 10)
	return append(b, '}')
}
