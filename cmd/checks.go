package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kneebench/knee/bench"
	"github.com/kneebench/knee/report"
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Bounds past which a size is a typo rather than a workload.
const (
	maxTokensBound = 10_000_000
	maxCountBound  = 1_000_000_000
	maxRateBound   = 1_000_000
)

// check reports the load flags that are out of range. A zero given on
// purpose is an error, not a request for the default: --rate 0 used to
// run a closed loop of one.
func (f *loadFlags) check(c *cobra.Command) error {
	fs := c.Flags()
	if math.IsNaN(f.rate) || math.IsInf(f.rate, 0) || math.IsNaN(f.burstiness) || math.IsInf(f.burstiness, 0) {
		return usageErr("--rate and --burstiness must be finite numbers")
	}
	if f.concurrency < 0 || f.rate < 0 || f.maxConcurrency < 0 || f.requests < 0 || f.duration < 0 ||
		f.inputTokens < 0 || f.maxTokens < 0 || f.warmup < -1 || f.drain < 0 {
		return usageErr("counts, rates and durations must not be negative")
	}
	for _, name := range []string{"rate", "concurrency", "requests", "duration", "input-tokens"} {
		if fl := fs.Lookup(name); fl != nil && fs.Changed(name) {
			if v := fl.Value.String(); v == "0" || v == "0s" {
				return usageErr("--%s 0 measures nothing; give a positive value (or leave the flag out)", name)
			}
		}
	}
	if f.rate > maxRateBound || f.concurrency > maxCountBound || f.maxConcurrency > maxCountBound || f.requests > maxCountBound {
		return usageErr("--rate, --concurrency, --max-concurrency or --requests is absurdly large")
	}
	if f.maxTokens < 1 {
		return usageErr("--max-tokens must be at least 1: a request without max_tokens runs on to the end of the model's context")
	}
	if f.inputTokens > maxTokensBound || f.maxTokens > maxTokensBound {
		return usageErr("--input-tokens and --max-tokens must be at most %d", maxTokensBound)
	}
	return nil
}

// checkBaseURL catches the usual mistakes in --base-url before anything is
// sent, with a hint at the fix.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		if !strings.Contains(raw, "://") {
			return usageErr("--base-url %q has no scheme: try http://%s", raw, strings.TrimLeft(raw, "/"))
		}
		return usageErr("--base-url %q is not a URL like http://host:8000/v1", raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return usageErr("--base-url %q: the scheme must be http or https", raw)
	}
	p := strings.TrimRight(u.Path, "/")
	for _, suffix := range []string{"/chat/completions", "/completions", "/models"} {
		if strings.HasSuffix(p, suffix) {
			return usageErr("--base-url %q names an endpoint; give the API root instead: %s", raw, strings.TrimSuffix(strings.TrimRight(raw, "/"), suffix))
		}
	}
	return nil
}

// checkOutputs checks every output path a command was given (flag name →
// path; empty paths are skipped) before anything is measured, and that no
// two of them name the same file. A name with "(out-dir)" in it is a file
// in a folder knee may create.
func checkOutputs(paths map[string]string) error {
	return checkIO(paths, nil)
}

// checkIO is checkOutputs, and also refuses an output that names the same
// file as one of the command's inputs (flag or argument name → path):
// writing it would destroy what is read, or what a later level reads.
func checkIO(outputs, inputs map[string]string) error {
	outs := slices.Sorted(maps.Keys(outputs))
	for i, flag := range outs {
		p := outputs[flag]
		if p == "" {
			continue
		}
		check := results.CheckOutput
		if strings.Contains(flag, "out-dir") {
			check = results.CheckOutputIn
		}
		if err := check(p); err != nil {
			return withCode(ExitRuntime, fmt.Errorf("%s: %w", flag, err))
		}
		for _, other := range outs[i+1:] {
			if q := outputs[other]; results.SamePlace(p, q) {
				return usageErr("%s %s and %s %s name the same file: one would overwrite the other", flag, p, other, q)
			}
		}
		for _, in := range slices.Sorted(maps.Keys(inputs)) {
			if q := inputs[in]; results.SamePlace(p, q) {
				return usageErr("%s %s is also %s: writing it would destroy what knee reads", flag, p, in)
			}
		}
	}
	return nil
}

// checkedWriter remembers the first write error of a stream, so a full
// disk or a closed pipe under --records ends the command with exit 3
// instead of losing records silently.
type checkedWriter struct {
	w      io.WriteCloser
	path   string
	err    error
	closed bool
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = fmt.Errorf("writing %s: %w", c.path, err)
	}
	return n, err
}

// Close closes the stream once and returns the first error of its life.
func (c *checkedWriter) Close() error {
	if !c.closed {
		c.closed = true
		if err := c.w.Close(); err != nil && c.err == nil {
			c.err = fmt.Errorf("closing %s: %w", c.path, err)
		}
	}
	return c.err
}

// writeJSON writes v to path, or to the command's standard output for "-".
func writeJSON(c *cobra.Command, path string, v any) error {
	if path != results.Stdout {
		return results.WriteJSON(path, v)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = c.OutOrStdout().Write(append(b, '\n'))
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// newProgress renders progress on w: in place, cut to the terminal's
// width, when w is a terminal; a line every few seconds otherwise.
func newProgress(w io.Writer) *report.Progress {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		width, _, err := term.GetSize(int(f.Fd()))
		if err != nil {
			width = 80
		}
		return report.NewProgress(w, true, width)
	}
	return report.NewProgress(w, false, 0)
}

// statusOf turns a bench snapshot into a progress line's status.
func statusOf(p bench.Progress, level string, total time.Duration) report.Status {
	return report.Status{Level: level, Elapsed: p.Elapsed, Total: total, Sent: p.Sent, OK: p.OK, Failed: p.Errors,
		InFlight: p.InFlight, TTFTP50ms: p.TTFTP50ms, TTFTP95ms: p.TTFTP95ms}
}

// outputWidth is the width of a terminal on w, else the width reports
// are written to.
func outputWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil {
			return width
		}
	}
	return report.ReportColumns
}

// argInputs names a command's file arguments as its inputs.
func argInputs(args []string) map[string]string {
	in := map[string]string{}
	for i, a := range args {
		in[fmt.Sprintf("input %d (%s)", i+1, a)] = a
	}
	return in
}

// inputs are the files a load reads.
func (f *loadFlags) inputs() map[string]string {
	return map[string]string{"--dataset": f.dataset, "--tokenizer": f.data.tokenizer}
}

// readInputs reads a command's result-file arguments, each bounded, and
// stops waiting on a FIFO at the first signal.
func readInputs(c *cobra.Command, paths []string) ([][]byte, error) {
	out := make([][]byte, len(paths))
	for i, p := range paths {
		b, err := results.ReadInput(c.Context(), p, results.MaxResultBytes)
		if err != nil {
			return nil, withCode(ExitRuntime, err)
		}
		out[i] = b
	}
	return out, nil
}
