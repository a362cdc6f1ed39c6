package driver

import (
	"slices"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
)

// SetTools sets Options.Tools, ToolRounds and ToolResult.
func (d *Driver) SetTools(tools []workload.Tool, rounds int, result string) {
	d.o.Tools, d.o.ToolRounds, d.o.ToolResult = tools, rounds, result
}

// offerTools gives a request without tools of its own the ones every
// request offers.
func (d *Driver) offerTools(r *workload.Request) {
	if r.Tools == nil && len(d.o.Tools) > 0 {
		r.Tools = d.o.Tools
	}
}

// withExchanges puts each turn's tool rounds after its user message:
// the finished turns' before their answers, the turn in progress' last.
func withExchanges(r *workload.Request, c *call) {
	if len(c.exchange) == 0 && !slices.ContainsFunc(c.exchanges, func(x []workload.Message) bool { return len(x) > 0 }) {
		return
	}
	out := make([]workload.Message, 0, len(r.Messages)+2*len(c.exchange))
	user := 0
	for _, m := range r.Messages {
		out = append(out, m)
		if m.Role != "user" {
			continue
		}
		if user < len(c.exchanges) {
			out = append(out, c.exchanges[user]...)
		} else if user == len(c.exchanges) {
			out = append(out, c.exchange...)
		}
		user++
	}
	r.Messages = out
}

// toolExchange is what an answer's tool calls add to its turn: the
// assistant's calls, then each call's canned result.
func (d *Driver) toolExchange(rec *record.Record) []workload.Message {
	calls := make([]workload.ToolCall, len(rec.ToolCalls))
	out := make([]workload.Message, 0, 1+len(calls))
	for i, tc := range rec.ToolCalls {
		calls[i] = workload.ToolCall(tc)
	}
	out = append(out, workload.Message{Role: "assistant", Content: string(rec.Text), ToolCalls: calls})
	for _, tc := range calls {
		out = append(out, workload.Message{Role: "tool", ToolCallID: tc.ID, Content: d.o.ToolResult})
	}
	return out
}
