package predict

import (
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/simulator/sched"
)

// refuse closes the record of a request the simulated server would not run
// at now: a refusal with the server's error class, or an empty answer,
// which the client has refusedCost later.
func refuse(rec *record.Record, err error, promptTokens int, now time.Duration) {
	if err != nil {
		rec.Status, rec.Class, rec.Message = 400, errorClass(err), err.Error()
	} else {
		rec.Status, rec.PromptTokens, rec.UsageReported = 200, promptTokens, true
	}
	rec.Done = now + refusedCost
}

// stamp releases a step's tokens to their requests' records and closes the
// records of the requests whose last token it was, calling done with each
// of them, in the step's order. Without chunks, it keeps no chunk times
// (no ITL is measured, which a plan not bounding ITL does without). Under
// a stream interval or a multi-step window a token leaves with its group
// (sched.Outputs),
// one chunk for each run of thought or answer tokens in it, as knee sim
// sends them.
func stamp(st *sched.Step, chunks bool, out sched.Outputs, rec func(*sched.Seq) *record.Record, done func(*sched.Seq)) {
	t := at(st.End)
	for _, e := range st.Emitted {
		from, ok := out.Release(st, e)
		if !ok {
			continue
		}
		r := rec(e.Seq)
		if e.Index == 0 {
			r.FirstToken = t
			r.CachedTokens = e.Seq.CachedTokens
		}
		// A reasoning model's first ReasoningTokens tokens are thought
		// (simServer.Send); the first after them is the first answer.
		if rt := r.ReasoningTokens; rt > 0 {
			// Each part's text, in tokens, as the client measures it in
			// bytes to split a packed stream's count.
			thought := max(min(e.Index+1, rt)-from, 0)
			r.ReasoningText += thought
			r.AnswerText += e.Index + 1 - from - thought
		}
		if from < r.ReasoningTokens {
			r.ReasoningChunks++
			chunk(r, t, chunks)
		}
		if e.Index >= r.ReasoningTokens {
			if r.AnswerChunks == 0 {
				r.FirstAnswer = t
			}
			r.AnswerChunks++
			chunk(r, t, chunks)
		}
		r.LastToken = t
	}
	for _, s := range st.Finished {
		r := rec(s)
		r.Done, r.Status = r.LastToken, 200
		r.UsageReported, r.CachedReported = true, true
		done(s)
	}
}

// chunk books one chunk of a record's stream at t.
func chunk(r *record.Record, t time.Duration, times bool) {
	r.Chunks++
	if times {
		r.ChunkTimes = append(r.ChunkTimes, t)
	}
}
