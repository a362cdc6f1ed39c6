package workload

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RateCurve is a load over time, a day's say: each step's rate (arrivals
// per second) holds from its start until the next step's, the last until
// End. It is what a daily plan provisions for.
type RateCurve struct {
	Steps []RateStep
	End   time.Duration
}

// RateStep is a rate from an instant on.
type RateStep struct {
	At   time.Duration
	Rate float64
}

// maxCurveSpan bounds a curve: a week, so a typo in a time column (a
// millisecond stamp read as seconds) is refused, not simulated for years.
const maxCurveSpan = 7 * 24 * time.Hour

// maxCurveRate bounds a rate, far past any fleet a plan searches.
const maxCurveRate = 1e6

// RateAt is the rate at t (0 outside the curve).
func (c RateCurve) RateAt(t time.Duration) float64 {
	if t < 0 || t >= c.End || len(c.Steps) == 0 {
		return 0
	}
	i, _ := slices.BinarySearchFunc(c.Steps, t, func(s RateStep, t time.Duration) int {
		switch {
		case s.At < t:
			return -1
		case s.At > t:
			return 1
		}
		return 0
	})
	if i == len(c.Steps) || c.Steps[i].At > t {
		i--
	}
	if i < 0 {
		return 0
	}
	return c.Steps[i].Rate
}

// Peak is the highest rate.
func (c RateCurve) Peak() float64 {
	p := 0.0
	for _, s := range c.Steps {
		p = max(p, s.Rate)
	}
	return p
}

// Mean is the mean rate over the curve's span.
func (c RateCurve) Mean() float64 {
	if c.End <= 0 {
		return 0
	}
	sum := 0.0
	for i, s := range c.Steps {
		end := c.End
		if i+1 < len(c.Steps) {
			end = c.Steps[i+1].At
		}
		sum += s.Rate * (end - s.At).Seconds()
	}
	return sum / c.End.Seconds()
}

// ParseRateCurve reads a CSV of time and rate, one step a line, in time
// order: the time as seconds from the start (60, 90.5), a clock time
// (08:30, 08:30:15; the first line's day) or an RFC 3339 instant, the
// rate in arrivals per second. A header line (time,rate) is skipped;
// blank lines and lines starting with # are ignored. The last step holds
// for the median spacing of the others (a minute, for one line). Errors
// name the line.
func ParseRateCurve(r io.Reader) (RateCurve, error) {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.Comment, cr.FieldsPerRecord, cr.TrimLeadingSpace = '#', -1, true
	var c RateCurve
	var origin time.Time
	var originSet bool
	line := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line++
		if err != nil {
			return RateCurve{}, fmt.Errorf("rate curve: %w", err)
		}
		if l, _ := cr.FieldPos(0); l > 0 {
			line = l
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) != 2 {
			return RateCurve{}, fmt.Errorf("rate curve line %d: want two columns, time and rate, got %d", line, len(rec))
		}
		ts, rs := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
		if len(c.Steps) == 0 && !originSet && strings.EqualFold(ts, "time") {
			continue
		}
		at, abs, clock, err := parseCurveTime(ts)
		if err != nil {
			return RateCurve{}, fmt.Errorf("rate curve line %d: time %q: %w", line, ts, err)
		}
		if n := len(c.Steps); n > 0 && abs.IsZero() == originSet {
			return RateCurve{}, fmt.Errorf("rate curve line %d: time %q: the lines mix seconds with clock times or instants: use one", line, ts)
		}
		if !abs.IsZero() {
			if !originSet {
				origin, originSet = abs, true
			}
			at = abs.Sub(origin)
			for n := len(c.Steps); clock && n > 0 && at <= c.Steps[n-1].At && at < maxCurveSpan; {
				// A clock time past midnight is the next day's.
				at += 24 * time.Hour
			}
		}
		rate, err := strconv.ParseFloat(rs, 64)
		if err != nil || math.IsNaN(rate) || math.IsInf(rate, 0) || rate < 0 || rate > maxCurveRate {
			return RateCurve{}, fmt.Errorf("rate curve line %d: rate %q: want arrivals per second, 0 to %g", line, rs, float64(maxCurveRate))
		}
		if n := len(c.Steps); n > 0 && at <= c.Steps[n-1].At {
			return RateCurve{}, fmt.Errorf("rate curve line %d: time %q is not after the line before's: lines go in time order", line, ts)
		}
		if at < 0 || at > maxCurveSpan {
			return RateCurve{}, fmt.Errorf("rate curve line %d: time %q is %s from the start, past a week", line, ts, at)
		}
		c.Steps = append(c.Steps, RateStep{At: at, Rate: rate})
	}
	if len(c.Steps) == 0 {
		return RateCurve{}, errors.New("rate curve: no lines of time and rate")
	}
	c.End = c.Steps[len(c.Steps)-1].At + medianSpacing(c.Steps)
	return c, nil
}

// parseCurveTime reads a curve's time: seconds (at), or a clock time
// (abs on a fixed day, clock set) or an instant (abs).
func parseCurveTime(s string) (at time.Duration, abs time.Time, clock bool, err error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > maxCurveSpan.Seconds() {
			return 0, time.Time{}, false, errors.New("want seconds from the start, 0 to a week")
		}
		return time.Duration(f * float64(time.Second)), time.Time{}, false, nil
	}
	for _, layout := range []string{"15:04:05", "15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return 0, t.AddDate(2000, 0, 0), true, nil // off year 0 (and 1, the zero time), so IsZero never matches
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return 0, t, false, nil
	}
	return 0, time.Time{}, false, errors.New("want seconds, HH:MM[:SS] or an RFC 3339 instant")
}

// medianSpacing is the median gap between steps (a minute for one).
func medianSpacing(steps []RateStep) time.Duration {
	if len(steps) < 2 {
		return time.Minute
	}
	gaps := make([]time.Duration, 0, len(steps)-1)
	for i := 1; i < len(steps); i++ {
		gaps = append(gaps, steps[i].At-steps[i-1].At)
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// RateCurveOf bins a trace's arrival offsets (TraceSchedule) into steps
// of bin: each step's rate is the arrivals in it per second. The curve
// ends at the bin holding the last arrival.
func RateCurveOf(offsets []time.Duration, bin time.Duration) RateCurve {
	if len(offsets) == 0 || bin <= 0 {
		return RateCurve{}
	}
	last := slices.Max(offsets)
	n := int(last/bin) + 1
	counts := make([]int, n)
	for _, o := range offsets {
		counts[int(o/bin)]++
	}
	c := RateCurve{End: time.Duration(n) * bin}
	for i, k := range counts {
		c.Steps = append(c.Steps, RateStep{At: time.Duration(i) * bin, Rate: float64(k) / bin.Seconds()})
	}
	return c
}

// ReadRateCurve reads a rate curve (ParseRateCurve), or a timestamped
// trace as a dataset holds one (JSON lines or an array, each line's
// timestamp its arrival) binned into minutes.
func ReadRateCurve(r io.Reader) (RateCurve, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(4096)
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	if bytes.IndexByte(head, 0) >= 0 {
		return RateCurve{}, errors.New("a NUL byte in its first 4 KB: not a CSV of time and rate, nor a trace's JSON lines")
	}
	if len(head) == 0 || head[0] != '{' && head[0] != '[' {
		return ParseRateCurve(br)
	}
	p, err := ParseDataset(br, FormatAuto)
	if err != nil {
		return RateCurve{}, fmt.Errorf("trace: %w", err)
	}
	if !p.Timed || len(p.Entries) == 0 {
		return RateCurve{}, errors.New("trace: its lines carry no timestamps (a trace's timestamp, or a CSV of time and rate)")
	}
	offsets := TraceSchedule(p.Entries, 1)
	if last := slices.Max(offsets); last > maxCurveSpan {
		return RateCurve{}, fmt.Errorf("trace: its timestamps span %s, past a week", last.Round(time.Hour))
	}
	return RateCurveOf(offsets, time.Minute), nil
}
