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
// (no ITL is measured, which a plan not bounding ITL does without).
func stamp(st *sched.Step, chunks bool, rec func(*sched.Seq) *record.Record, done func(*sched.Seq)) {
	t := at(st.End)
	for _, e := range st.Emitted {
		r := rec(e.Seq)
		if e.Index == 0 {
			r.FirstToken = t
			r.CachedTokens = e.Seq.CachedTokens
		}
		// A reasoning model's first ReasoningTokens tokens are thought
		// (simServer.Send); the first after them is the first answer.
		switch {
		case e.Index < r.ReasoningTokens:
			r.ReasoningChunks++
		case r.AnswerChunks == 0:
			r.FirstAnswer = t
			fallthrough
		default:
			r.AnswerChunks++
		}
		r.LastToken = t
		r.Chunks++
		if chunks {
			r.ChunkTimes = append(r.ChunkTimes, t)
		}
	}
	for _, s := range st.Finished {
		r := rec(s)
		r.Done, r.Status = r.LastToken, 200
		r.UsageReported, r.CachedReported = true, true
		done(s)
	}
}
