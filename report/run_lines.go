package report

import (
	"fmt"

	"github.com/kneebench/knee/results"
)

// ReasoningLine says what the requests that reasoned did: how many, how
// many gave no answer, thought and answer per request, and the first
// answer token's times.
func ReasoningLine(r *results.Run) string {
	rs, a := r.Reasoning, r.Stats.TTFAT
	line := fmt.Sprintf("reasoning %s reasoned · %s gave no answer (%d at max_tokens) · per request: reasoning p50 %s (mean %s), answer p50 %s (mean %s) tokens, counted from %s",
		results.Plural(int(rs.Requests), "request"), pct(rs.NoAnswerShare()), rs.BudgetSpent, num(rs.ReasoningPerRequest.P50, 0), num(rs.ReasoningPerRequest.Mean, 1),
		num(rs.AnswerPerRequest.P50, 0), num(rs.AnswerPerRequest.Mean, 1), reasoningSource(rs.Source))
	if a.Count > 0 {
		line += fmt.Sprintf("\n          TTFAT (first answer token) p50 %s · p95 %s · p99 %s ms · over answer tokens: TPOT p50 %s, ITL p50 %s ms (over all output %s, %s)",
			ms(a.P50), ms(a.P95), ms(a.P99), ms(rs.TPOTAnswer.P50), ms(rs.ITLAnswer.P50), ms(r.Stats.TPOT.P50), ms(r.Stats.ITL.P50))
	}
	return line
}

// ImagesLine says what the requests sent in images, and what the server
// counted for them.
func ImagesLine(r *results.Run) string {
	im := r.Images
	n := float64(max(im.Requests, 1))
	line := fmt.Sprintf("images   %s a request (%s) · %s KB an image · %s KB a request body",
		num(float64(im.Images)/n, 1), r.Config.Images, num(float64(im.ImageBytes)/float64(max(im.Images, 1))/1024, 1), num(float64(im.BodyBytes)/n/1024, 1))
	if t := im.TokensPerImage; t != nil {
		line += fmt.Sprintf(" · the server counted %s prompt tokens an image past the sized text", num(*t, 1))
	}
	if u, sh := im.UploadMeanMs, im.UploadShare; u != nil && sh != nil {
		line += fmt.Sprintf(" · sending a body took %s ms on average (%s%% of TTFT sched; longest %s ms)", num(*u, 2), num(*sh*100, 1), num(float64(im.UploadMaxNs)/1e6, 2))
	}
	return line
}

// ToolsLine says how many answers called a tool, and with how many
// chunks of calls.
func ToolsLine(r *results.Run) string {
	tc := r.ToolCalls
	share := 0.0
	if r.Requests.OK > 0 {
		share = float64(tc.Requests) / float64(r.Requests.OK)
	}
	line := fmt.Sprintf("tool calls  %s answered with a call (%s of those that succeeded; %d said finish_reason tool_calls) · %d call chunks, %s a call",
		results.Plural(int(tc.Requests), "request"), pct(share), tc.FinishToolCalls, tc.ArgumentChunks, num(float64(tc.ArgumentChunks)/float64(max(tc.Requests, 1)), 1))
	if tc.Offered > 0 {
		line += fmt.Sprintf(" · offered to %d", tc.Offered)
	}
	if tc.RequiredNotCalled > 0 {
		line += fmt.Sprintf(" · %d answered without the call tool_choice required", tc.RequiredNotCalled)
	}
	return line
}

// reasoningSource says where reasoning counts came from, in words.
func reasoningSource(s string) string {
	switch s {
	case "usage":
		return "the server's usage (reasoning_tokens)"
	case "both":
		return "usage where sent, the stream elsewhere"
	case "text":
		return "the server's completion count split by each part's text (its events packed several tokens)"
	case "tokenizer":
		return "the server's completion count split by each part's tokens, counted with --tokenizer (its events packed several tokens)"
	}
	return "the stream (the server sent no reasoning_tokens)"
}
