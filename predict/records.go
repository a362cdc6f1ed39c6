package predict

import (
	"sort"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/simulator/sched"
)

// refuse closes the record of a request the simulated server would not run:
// a refusal with the server's error class, or an empty answer. It returns
// when the client has the answer.
func refuse(rec *record.Record, err error, promptTokens int, at float64) float64 {
	if err != nil {
		rec.Status, rec.Class, rec.Message = 400, errorClass(err), err.Error()
	} else {
		rec.Status, rec.PromptTokens, rec.UsageReported = 200, promptTokens, true
	}
	rec.Done = dur(at + refusedCost)
	return at + refusedCost
}

// stamp releases a step's tokens to their requests' records and closes the
// records of the requests whose last token it was, calling done with each
// of them, in the step's order.
func stamp(st *sched.Step, rec func(id int64) *record.Record, done func(id int64)) {
	t := dur(st.End)
	for _, e := range st.Emitted {
		r := rec(e.Seq.ID)
		if e.Index == 0 {
			r.FirstToken = t
			r.CachedTokens = e.Seq.CachedTokens
		}
		r.LastToken = t
		r.Chunks++
		r.ChunkTimes = append(r.ChunkTimes, t)
	}
	for _, s := range st.Finished {
		r := rec(s.ID)
		r.Done, r.Status = r.LastToken, 200
		r.UsageReported, r.CachedReported = true, true
		done(s.ID)
	}
}

// insertByTime inserts x into s, kept in order of at, after any equal.
func insertByTime[T any](s []T, x T, at func(T) float64) []T {
	i := sort.Search(len(s), func(i int) bool { return at(s[i]) > at(x) })
	var zero T
	s = append(s, zero)
	copy(s[i+1:], s[i:])
	s[i] = x
	return s
}
