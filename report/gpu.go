package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kneebench/knee/results"
)

// GPULine says what the GPUs drew over a window and what the work cost
// in energy: the sum over the GPUs scraped, then each GPU.
func GPULine(g *results.GPUFigures) string {
	if g == nil {
		return ""
	}
	if len(g.GPUs) == 0 {
		line := "gpu      no GPU figures"
		for _, w := range g.Warnings {
			line += "\n         " + w
		}
		return line
	}
	line := fmt.Sprintf("gpu      %s (%d serving) over %.1f s: %s J · power mean %s W, max %s W · %s%s J per request · %s J per 1k prompt tokens",
		results.Plural(len(g.GPUs), "GPU"), g.Serving(), g.WindowS, num(g.EnergyJ, 0), num(g.PowerMeanW, 0), num(g.PowerMaxW, 0), perOutputToken(g),
		num(g.JoulesPerRequest, 1), num(g.JoulesPer1kPromptTokens, 1))
	if g.OutputTokensPerJoule > 0 {
		line += fmt.Sprintf(" · %s output tokens per J", num(g.OutputTokensPerJoule, 2))
	}
	for _, f := range g.GPUs {
		line += fmt.Sprintf("\n         GPU %s %s: %s J (%s) · %s W mean, %s W max", f.GPU, f.Model, num(f.EnergyJ, 0), f.EnergySource, num(f.PowerMeanW, 0), num(f.PowerMaxW, 0))
		if f.UtilMeanPct > 0 {
			line += fmt.Sprintf(" · util %s%%", num(f.UtilMeanPct, 0))
		}
		if f.Idle {
			line += " · idle, not counted"
		}
	}
	for _, w := range append(g.Notes, g.Warnings...) {
		line += "\n         " + w
	}
	return line
}

// perOutputToken is the energy per output token and a separator, or ""
// when no token was generated (a pooling endpoint's requests).
func perOutputToken(g *results.GPUFigures) string {
	if g.JoulesPerOutputToken > 0 {
		return num(g.JoulesPerOutputToken, 4) + " J per output token · "
	}
	return ""
}

// GPULevels prints each level's energy per output token, for a sweep
// whose levels scraped the GPUs.
func GPULevels(w io.Writer, s *results.Sweep) {
	for _, l := range s.Levels {
		if l.Run == nil || l.Run.GPU == nil {
			continue
		}
		g := l.Run.GPU
		if len(g.GPUs) == 0 {
			continue
		}
		how := "scraped"
		if g.GPUs[0].EnergySource == "predicted power model" {
			how = "predicted from the presets' power model"
		}
		Wrapf(w, 13, "gpu %-8g %s%s J per request · power mean %s W (%s, %s)\n",
			l.Load, perOutputToken(g), num(g.JoulesPerRequest, 1), num(g.PowerMeanW, 0), results.Plural(len(g.GPUs), "GPU"), how)
	}
}

// SlicesLine is a run's slices in one line: each slice's TTFT p50 from
// the schedule and its completions, in order ("" without slices).
func SlicesLine(r *results.Run) string {
	if len(r.Slices) == 0 {
		return ""
	}
	// A pooling endpoint's answer is one body: its latency is E2E.
	what, of := "TTFT", func(s results.Slice) results.SliceDist { return s.TTFTSched }
	if r.Config.Pooled() {
		what, of = "E2E", func(s results.Slice) results.SliceDist { return s.E2ESched }
	}
	line := fmt.Sprintf("slices   %s s each · %s sched p50 ms / completed:", num(r.SliceS, 1), what)
	for _, s := range r.Slices {
		p := "-"
		if d := of(s); d.Count > 0 {
			p = ms(d.P50)
		}
		line += fmt.Sprintf(" %s/%d", p, s.Completed)
	}
	if slices.ContainsFunc(r.Slices, func(s results.Slice) bool { return s.Server != nil && s.Server.Waiting != nil }) {
		line += "\nslices   the server's waiting / running requests as each slice ended:"
		for _, s := range r.Slices {
			g := s.Server
			if g == nil || g.Waiting == nil || g.Running == nil {
				line += " -"
				continue
			}
			line += fmt.Sprintf(" %s/%s", num(*g.Waiting, 0), num(*g.Running, 0))
		}
	}
	return line + sliceClientLine(r.Slices)
}

// sliceClientLine names the slices whose client was not healthy, by
// their start ("" when every judged slice was).
func sliceClientLine(ss []results.Slice) string {
	var bad []string
	for _, s := range ss {
		if c := s.Client; c != nil && c.Verdict != results.VerdictHealthy {
			bad = append(bad, s.Span()+" "+c.Verdict)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return "\nslices   the client was not healthy in every slice: " + strings.Join(bad, " · ")
}
