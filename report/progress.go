package report

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kneebench/knee/results"
	"golang.org/x/term"
)

// Progress renders live progress of a running run or level: on a terminal
// one line rewritten in place, cut to the terminal's width so it never
// wraps and piles up; elsewhere a plain line every few seconds.
type Progress struct {
	w        io.Writer
	tty      bool
	width    int
	lastLine time.Time
}

// NewProgress writes progress to w, a terminal of the given width in
// columns when tty (0 means 80).
func NewProgress(w io.Writer, tty bool, width int) *Progress {
	if width <= 0 {
		width = 80
	}
	return &Progress{w: w, tty: tty, width: width}
}

// Status is one progress snapshot. Level, when set, names the sweep level
// ("level 2/8 (4/s)").
type Status struct {
	Level                string
	Elapsed, Total       time.Duration
	Sent, OK, Failed     int64
	InFlight             int64
	TTFTP50ms, TTFTP95ms float64
	// ServerRunning and ServerWaiting are the server's own gauges as last
	// read, nil when they are not.
	ServerRunning, ServerWaiting *float64
}

// Segments are the parts of a status line, most important first: a line
// that does not fit drops parts from the end.
func (s Status) Segments() []string {
	var segs []string
	if s.Level != "" {
		segs = append(segs, s.Level)
	}
	el := s.Elapsed.Truncate(time.Second)
	switch {
	case s.Total > 0 && s.Elapsed > s.Total:
		segs = append(segs, fmt.Sprintf("%s/%s, draining", el, s.Total))
	case s.Total > 0:
		segs = append(segs, fmt.Sprintf("%s/%s", el, s.Total))
	default:
		segs = append(segs, el.String())
	}
	segs = append(segs, fmt.Sprintf("%d sent, %d ok, %d failed", s.Sent, s.OK, s.Failed))
	if s.TTFTP95ms > 0 {
		segs = append(segs, fmt.Sprintf("TTFTs p50 %s p95 %s ms", ms(s.TTFTP50ms), ms(s.TTFTP95ms)))
	}
	segs = append(segs, fmt.Sprintf("%d in flight", s.InFlight))
	if s.ServerRunning != nil && s.ServerWaiting != nil {
		segs = append(segs, fmt.Sprintf("server %.0f running, %.0f waiting", *s.ServerRunning, *s.ServerWaiting))
	}
	return segs
}

// FitLine joins segments with " · " into at most width columns: segments
// that do not fit are left out whole, so no word is ever cut; a first
// segment longer than the width is shortened with an ellipsis.
func FitLine(segs []string, width int) string {
	var b strings.Builder
	used := 0
	for i, seg := range segs {
		sep := ""
		if i > 0 {
			sep = " · "
		}
		n := utf8.RuneCountInString(sep + seg)
		if used+n > width {
			if i == 0 {
				r := []rune(seg)
				return string(r[:max(width-1, 0)]) + "…"
			}
			break
		}
		b.WriteString(sep + seg)
		used += n
	}
	return b.String()
}

// Update shows a snapshot.
func (p *Progress) Update(s Status) {
	if p.tty {
		// Leave the last column free: some terminals wrap when it is
		// written.
		fmt.Fprintf(p.w, "\r\033[K%s", FitLine(s.Segments(), p.width-1))
		return
	}
	if time.Since(p.lastLine) >= 5*time.Second {
		p.lastLine = time.Now()
		fmt.Fprintln(p.w, FitLine(s.Segments(), ReportColumns))
	}
}

// Terminal reports whether the progress goes to a terminal.
func (p *Progress) Terminal() bool { return p.tty }

// Line shows a line of segments (a terminal's, fitted to its width).
func (p *Progress) Line(segs []string) {
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", FitLine(segs, p.width-1))
		return
	}
	fmt.Fprintln(p.w, FitLine(segs, ReportColumns))
}

// Done clears the progress line.
func (p *Progress) Done() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// ReportColumns is the width the reports are wrapped to.
const ReportColumns = 100

// Wrap writes text wrapped to ReportColumns at its " · " or spaces, each
// continued line indented by indent (and started by the dot it was
// wrapped at, which may mark a qualifier rather than a list).
func Wrap(w io.Writer, indent int, text string) {
	ww := newWrapWriter(w, indent)
	_, _ = io.WriteString(ww, text)
	_ = ww.Flush()
}

// Wrapf is Wrap of a formatted text.
func Wrapf(w io.Writer, indent int, format string, a ...any) {
	Wrap(w, indent, fmt.Sprintf(format, a...))
}

// wrapWriter wraps each line longer than width at its last " · " (or
// space) that fits, continuing with an indent, so no word is cut and no
// terminal wraps a line for us.
type wrapWriter struct {
	w      io.Writer
	width  int
	indent string
	buf    []byte
}

func newWrapWriter(w io.Writer, indent int) *wrapWriter {
	return &wrapWriter{w: w, width: ReportColumns, indent: strings.Repeat(" ", indent)}
}

func (ww *wrapWriter) Write(p []byte) (int, error) {
	ww.buf = append(ww.buf, p...)
	for {
		i := strings.IndexByte(string(ww.buf), '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(ww.buf[:i])
		ww.buf = ww.buf[i+1:]
		if _, err := io.WriteString(ww.w, wrapLine(line, ww.width, ww.indent)+"\n"); err != nil {
			return 0, err
		}
	}
}

// Flush writes what is left without a final newline.
func (ww *wrapWriter) Flush() error {
	if len(ww.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(ww.w, wrapLine(string(ww.buf), ww.width, ww.indent))
	ww.buf = ww.buf[:0]
	return err
}

// wrapLine breaks line into lines of at most width columns.
func wrapLine(line string, width int, indent string) string {
	var out []string
	for utf8.RuneCountInString(line) > width {
		r := []rune(line)
		cut := -1
		for i := width; i > len(indent)+10; i-- {
			if i+2 < len(r) && string(r[i:i+3]) == " · " {
				cut = i
				break
			}
		}
		if cut < 0 {
			for i := width; i > len(indent)+10; i-- {
				if r[i] == ' ' && !unitAfter(r[i+1:]) {
					cut = i
					break
				}
			}
		}
		if cut < 0 {
			break // one word longer than the line: leave it whole
		}
		out = append(out, string(r[:cut]))
		rest := strings.TrimLeft(string(r[cut:]), " ")
		line = indent + rest
	}
	return strings.Join(append(out, line), "\n")
}

// unitAfter reports whether r starts with a unit that belongs with the
// number before it ("260.4 ms" stays on one line).
func unitAfter(r []rune) bool {
	word := string(r)
	if i := strings.IndexAny(word, " \n"); i >= 0 {
		word = word[:i]
	}
	word = strings.TrimRight(word, ").,;")
	switch word {
	case "ms", "s", "µs", "%", "tok/s", "req/s", "calls/s", "turns/s", "tokens", "requests":
		return true
	}
	return false
}

// StatusOf is a progress line's status for a level's progress, level
// naming it and total its window (0: not a timed window).
func StatusOf(p results.Progress, level string, total time.Duration) Status {
	s := Status{Level: level, Elapsed: p.Elapsed, Total: total, Sent: p.Sent, OK: p.OK, Failed: p.Errors,
		InFlight: p.InFlight, TTFTP50ms: p.TTFTP50ms, TTFTP95ms: p.TTFTP95ms}
	if g := p.Server; g != nil {
		s.ServerRunning, s.ServerWaiting = g.Running, g.Waiting
	}
	return s
}

// NewTerminalProgress renders progress on w: in place, cut to the
// terminal's width, when w is a terminal; a line every few seconds
// otherwise.
func NewTerminalProgress(w io.Writer) *Progress {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		width, _, err := term.GetSize(int(f.Fd()))
		if err != nil {
			width = 80
		}
		return NewProgress(w, true, width)
	}
	return NewProgress(w, false, 0)
}

// Width is the width of a terminal on w, else ReportColumns.
func Width(w io.Writer) int {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil {
			return width
		}
	}
	return ReportColumns
}
