package driver

import "github.com/kneebench/knee/workload"

// RequestWords is Request for a sender that needs a prompt's tokens and
// not its text (the predictor): a measured request of a
// workload.WordSource, not a call's turn, offered no tools, comes with
// its one message's text as words appended to buf and its Content empty,
// and its expected prefix share is found from the words. A later Request
// writes the text. ok is false, and nothing is built, for any other
// request: Request is then the way.
func (f *Flight) RequestWords(buf []uint16) (req *workload.Request, words []uint16, ok bool) {
	ws, isWords := f.src.(workload.WordSource)
	if f.built || f.call != nil || !f.measured || !isWords || len(f.d.o.Tools) > 0 {
		return nil, buf, false
	}
	r, words, ok := ws.RequestWords(f.Rec.Index, buf)
	if !ok {
		return nil, buf, false
	}
	f.req, f.built, f.unwritten = r, true, true
	f.Rec.Tag, f.Rec.MixClass = r.Tag, r.Class
	f.Rec.PrefixShare = f.d.o.Prefixes.ShareWords(&f.req, words, ws, f.Rec.Index)
	return &f.req, words, true
}
