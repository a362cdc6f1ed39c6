package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/kneebench/knee/bench/record"
	"github.com/kneebench/knee/workload"
	"github.com/valyala/fasthttp"
)

// scratch is per-goroutine reusable state for one request at a time.
type scratch struct {
	body []byte
	lr   *lineReader
	ch   chunk
	ev   []byte // the data of the SSE event being read
}

func newScratch() *scratch {
	// 4 KiB holds any token's event (some 300 bytes); a longer line
	// grows apart (lineReader.long), so a request in flight costs little.
	return &scratch{lr: newLineReader(nil, 4*1024)}
}

var scratchPool = sync.Pool{New: func() any { return newScratch() }}

// Do sends r and fills rec with what happened. It never returns an error:
// every failure becomes rec.Class. keepText asks for the generated text in
// rec.Text.
func (c *Client) Do(r *workload.Request, rec *record.Record, keepText bool) {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	c.prepare(req, s, r, rec)
	rec.Sent = c.Now()
	if err := c.send(req, resp, rec); err != nil {
		rec.Done = c.Now()
		rec.Class, rec.Message = c.classifyAt(err, false, rec.Sent), err.Error()
		if headersTooLong(err) {
			rec.Message = fmt.Sprintf("the response's headers are longer than the %d KiB knee reads", MaxHeaderBytes>>10)
		}
		return
	}
	rec.Status = resp.StatusCode()
	a := c.open(resp, rec)
	defer func() { rec.Done = c.Now() }()
	if rec.Status != fasthttp.StatusOK {
		c.refused(resp, a.body, rec)
		return
	}
	sp, ok := c.proto.(streamProtocol)
	if !ok {
		c.readPooled(c.proto.(pooledProtocol), a.body, resp.Header.ContentLength(), r, rec, a.fail)
		return
	}
	if ct := resp.Header.ContentType(); !bytes.HasPrefix(ct, []byte("text/event-stream")) {
		c.readUnstreamed(a.body, resp.Header.ContentLength(), rec, a.fail, keepText)
		return
	}
	st := &streamState{c: c, p: sp, rec: rec, s: s, keepText: keepText, tc: a.tc, fail: a.fail}
	st.think.count = c.t.CountTokens
	defer st.think.flush(rec)
	st.read(a.body)
	if _, ok := sp.(silentCut); ok && rec.OK() && !rec.FinishLength && rec.MaxTokens > 0 && rec.CompletionTokens >= rec.MaxTokens {
		// Its end does not say it was cut: its count does.
		rec.FinishLength = true
	}
}

// silentCut is a protocol whose servers may end an answer cut at its
// token limit as a whole one (llama.cpp's and llm-d's Responses streams
// send response.completed, not response.incomplete).
type silentCut interface{ cutEndsComplete() }

// prepare writes r into req, and what is known of it before it is sent
// into rec.
func (c *Client) prepare(req *fasthttp.Request, s *scratch, r *workload.Request, rec *record.Record) {
	s.body = c.appendBody(s.body[:0], r)
	rec.BodyBytes = len(s.body)
	for _, m := range r.Messages {
		for _, u := range m.Images {
			rec.Images++
			rec.ImageBytes += len(u)
		}
	}
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI(c.uri)
	req.Header.SetContentType("application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	for _, h := range c.t.Headers {
		req.Header.Set(h[0], h[1])
	}
	for _, h := range r.Headers {
		req.Header.Set(h[0], h[1])
	}
	req.SetBodyRaw(s.body)
	rec.MaxTokens, rec.IgnoreEOS = r.MaxTokens, c.asksFull(r)
	if c.extraMaxTokens >= 0 {
		rec.MaxTokens = c.extraMaxTokens
	}
}

// send sends req, again once where nothing was answered for a reason of
// the connection's, not the server's. The clock keeps running from the
// first send.
func (c *Client) send(req *fasthttp.Request, resp *fasthttp.Response, rec *record.Record) error {
	pool := c.pool()
	err := pool.Do(req, resp)
	if err != nil && pool == c.hc && headersTooLong(err) {
		// The response's headers outgrew the narrow buffers: send it
		// again on wide ones, as every later request will go (and every
		// one already out on the narrow pool is sent again too). The
		// server has seen the prompt once already, so a prefix cache may
		// serve it.
		c.widen()
		c.resent.Add(1)
		rec.Resent = true
		err = c.pool().Do(req, resp)
	}
	if err != nil && c.closedUnanswered(resp, err) {
		// The server closed a kept-alive connection just as this request
		// went out on it (llama.cpp's server closes after every stream):
		// nothing was answered, so send it once more on a fresh one.
		c.resent.Add(1)
		rec.Resent = true
		err = c.pool().Do(req, resp)
	}
	return err
}

// answer is a response being read: its body, the connection whose read
// deadline follows the content (nil when not one of knee's), and how a
// failure ends it.
type answer struct {
	body io.Reader
	tc   *trackedConn
	fail func(class string, err error)
}

// open starts reading resp: from here on the read deadline follows the
// content (the time allowed between content chunks, within the request's
// total).
func (c *Client) open(resp *fasthttp.Response, rec *record.Record) answer {
	tc := connOf(resp.LocalAddr())
	a := answer{body: resp.BodyStream(), tc: tc}
	if tc != nil {
		rec.Upload = max(tc.lastWrite().Sub(c.start.Add(rec.Sent)), 0)
		end := earliest(c.start.Add(rec.Sent), c.t.RequestTimeout, time.Time{}, 0)
		tc.follow(c.start.UnixNano(), c.t.Timeout, end, c.Now())
	}
	if a.body == nil {
		a.body = bytes.NewReader(resp.Body())
	}
	closer, _ := a.body.(fasthttp.ReadCloserWithError)
	a.fail = func(class string, err error) {
		rec.Class = class
		if err != nil {
			rec.Message = err.Error()
		}
		if closer != nil {
			_ = closer.CloseWithError(err)
		}
	}
	return a
}

// refused reads an answer other than 200: the server's own words, its
// Retry-After, where a redirect points.
func (c *Client) refused(resp *fasthttp.Response, body io.Reader, rec *record.Record) {
	if ra := resp.Header.Peek("Retry-After"); len(ra) > 0 {
		if secs, err := strconv.ParseFloat(string(ra), 64); err == nil && secs >= 0 {
			rec.RetryAfter = time.Duration(secs * float64(time.Second))
		}
	}
	msg, _ := io.ReadAll(io.LimitReader(body, 64*1024))
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 1<<20))
	class, text := httpErrorClass(rec.Status, msg)
	if loc := resp.Header.Peek("Location"); rec.Status >= 300 && rec.Status < 400 && len(loc) > 0 {
		text = redirectText(rec.Status, string(loc))
	}
	rec.Class, rec.Message = class, text
}

// read reads the stream's events. Lines are grouped into events as SSE
// defines them: data lines joined with "\n" until a blank line. A data
// line that opens a new JSON object (or is [DONE]) while the pending data
// already holds a whole one starts a new event, for servers that leave
// out the blank line.
func (st *streamState) read(body io.Reader) {
	lr := st.s.lr
	lr.reset(body)
	ev := st.s.ev[:0]
	pending := false
	defer func() { st.s.ev = ev[:0] }()
	for {
		line, err := lr.next()
		if err != nil {
			if !(pending && err == io.EOF && st.event(ev)) {
				st.ended(err)
			}
			return
		}
		if len(line) == 0 {
			if pending {
				if st.event(ev) {
					return
				}
				ev, pending = ev[:0], false
			}
			continue
		}
		payload, ok := dataPayload(line)
		if !ok {
			if !isSSEField(line) {
				st.fail(record.ClassMalformed, fmt.Errorf("not an SSE line: %.60q", line))
				return
			}
			continue
		}
		if pending {
			if wholeObject(ev) && (len(payload) > 0 && payload[0] == '{' || bytes.Equal(payload, payloadDone)) {
				if st.event(ev) {
					return
				}
				ev = ev[:0]
			} else {
				ev = append(ev, '\n')
			}
		}
		if len(ev)+len(payload) > maxEventBytes {
			st.fail(record.ClassMalformed, errEventTooLarge)
			return
		}
		ev = append(ev, payload...)
		pending = true
	}
}

// ended is the stream's end, by err: whole, cut short or failed.
func (st *streamState) ended(err error) {
	switch {
	case err == io.EOF:
		if st.done {
			return
		}
		if st.finished {
			// The answer said it was over (a finish_reason): only the
			// terminator is missing. Kept, and counted.
			st.rec.NoDone = true
			return
		}
		st.fail(record.ClassTruncated, errors.New("stream ended without [DONE]"))
	case err == errEventTooLarge:
		st.fail(record.ClassMalformed, err)
	default:
		st.fail(st.c.classifyAt(err, st.rec.Chunks > 0, st.rec.Sent), err)
	}
}

// wholeObject reports whether b looks like one complete JSON object.
func wholeObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}'
}

// streamState is what one stream's events update.
type streamState struct {
	c              *Client
	p              streamProtocol
	rec            *record.Record
	s              *scratch
	keepText       bool
	tc             *trackedConn
	fail           func(string, error)
	done, finished bool
	prog           progress
	think          thinking
}

// event handles one complete SSE event's data. It reports whether the
// request is over (a failure).
func (st *streamState) event(payload []byte) (stop bool) {
	if st.done {
		return false
	}
	rec := st.rec
	t := st.c.Now()
	if bytes.Equal(payload, payloadDone) {
		st.done = true
		return false
	}
	if len(payload) == 0 || payload[0] != '{' {
		st.fail(record.ClassMalformed, fmt.Errorf("event is not a JSON object: %.60q", payload))
		return true
	}
	ch := &st.s.ch
	st.p.scan(payload, ch, &st.prog)
	if ch.hasError {
		st.fail(record.ClassStreamError, fmt.Errorf("error event: %.200s", payload))
		return true
	}
	if ch.content {
		if st.tc != nil {
			st.tc.content(t)
		}
		if rec.Chunks == 0 {
			rec.FirstToken = t
		}
		rec.Chunks++
		rec.LastToken = t
		rec.ChunkTimes = append(rec.ChunkTimes, t)
		st.think.classify(rec, ch, t)
		if st.keepText {
			rec.Text = st.p.text(rec.Text, payload)
		}
	}
	if ch.finished {
		st.finished = true
		rec.FinishLength = rec.FinishLength || ch.finishLength
		rec.ToolFinish = rec.ToolFinish || ch.finishTool
	}
	if ch.terminal {
		st.done = true
	}
	if st.keepText {
		if ch.responseID != nil {
			rec.ResponseID = string(ch.responseID)
		}
		if ch.tool || ch.toolItem {
			st.p.keepCall(rec, payload)
		}
	}
	st.counts(ch)
	return false
}

// counts keeps what a chunk says of the request's tokens: llama.cpp's
// timings, the usage.
func (st *streamState) counts(ch *chunk) {
	rec := st.rec
	if ch.timings {
		rec.Timings = &record.Timings{CacheN: ch.cacheN, PromptMs: ch.promptMs, PredictedMs: ch.predictedMs, PredictedN: ch.predictedN}
		if !rec.CachedReported {
			// llama.cpp reports the prompt tokens it reused here.
			rec.CachedTokens, rec.CachedFromTimings, rec.CachedReported = ch.cacheN, true, true
		}
	}
	if ch.usage {
		rec.UsageReported = true
		rec.PromptTokens = ch.promptTokens
		rec.CompletionTokens = ch.outTokens
		rec.UsageOdd = ch.usageOdd
		if ch.promptOdd {
			rec.PromptOdd = ch.promptRaw
		}
		if ch.cachedSeen {
			rec.CachedReported, rec.CachedFromTimings = true, false
			rec.CachedTokens = ch.cachedTokens
		}
		if ch.reasoningSeen {
			rec.ReasoningTokens, rec.ReasoningReported = ch.reasoningTokens, true
		}
	}
}
