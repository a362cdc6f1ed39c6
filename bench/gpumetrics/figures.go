package gpumetrics

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/kneebench/knee/results"
)

// A window's figures from its samples: per GPU, then summed.

// figures sums samples taken through a window, the first and the last
// at its ends: per GPU, energy from the counter's advance when it has
// one at both ends (and it did not go back), else power integrated by
// the trapezoid rule; mean power as energy over the span; the largest
// power, mean utilisation and largest memory sampled.
func figures(samples []*scrape) *results.GPUFigures {
	first, last := samples[0], samples[len(samples)-1]
	span := last.at.Sub(first.at).Seconds()
	g := &results.GPUFigures{WindowS: span}
	seen := map[string]bool{}
	for _, s := range samples {
		for _, e := range s.errs {
			if !seen[e] {
				seen[e] = true
				g.Warnings = append(g.Warnings, e)
			}
		}
	}
	keys := bothEnds(first, last)
	var serving []key
	var idle []string
	for _, k := range keys {
		f, warning := gpuFigure(samples, k, span)
		if warning != "" {
			g.Warnings = append(g.Warnings, warning)
		}
		if f.EnergySource == "" {
			// No plausible reading: a GPU of 0 J would look measured.
			continue
		}
		if f.Idle = idleGPU(f); f.Idle {
			idle = append(idle, k.endpoint+" GPU "+k.gpu)
		} else {
			serving = append(serving, k)
			g.EnergyJ += f.EnergyJ
		}
		g.GPUs = append(g.GPUs, f)
	}
	if len(idle) > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("left out of the energy as idle over the window (utilisation under %g%%): %s; counted: the %d GPUs that served",
			idleUtilPct, strings.Join(idle, ", "), len(serving)))
	}
	keys = serving
	if span > 0 {
		g.PowerMeanW = g.EnergyJ / span
	}
	for _, s := range samples {
		sum, any := 0.0, false
		for _, k := range keys {
			if r, ok := s.gpus[k]; ok && r.hasPower {
				sum, any = sum+r.power, true
			}
		}
		if any {
			g.PowerMaxW = math.Max(g.PowerMaxW, sum)
		}
	}
	if len(bothEnds(first, last)) == 0 {
		g.Warnings = append(g.Warnings, "no GPU answered at both ends of the window")
	}
	return g
}

// bothEnds is the GPUs seen at both ends of the window, in order.
func bothEnds(first, last *scrape) []key {
	keys := make([]key, 0, len(last.gpus))
	for k := range last.gpus {
		if _, ok := first.gpus[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.endpoint != b.endpoint {
			return a.endpoint < b.endpoint
		}
		return a.gpu+a.uuid < b.gpu+b.uuid
	})
	return keys
}

// gpuFigure is one GPU's figures over the window: energy from its counter
// (or its power integrated when the counter is missing or went back), peak
// and mean power, utilisation and memory.
func gpuFigure(samples []*scrape, k key, span float64) (results.GPUFigure, string) {
	f := results.GPUFigure{Endpoint: k.endpoint, GPU: k.gpu, UUID: k.uuid, Model: k.model, Host: k.host}
	a, b := samples[0].gpus[k], samples[len(samples)-1].gpus[k]
	var integrated, utilSum float64
	var utilN, powered int
	var prev *scrape
	for _, s := range samples {
		r, ok := s.gpus[k]
		if !ok {
			continue
		}
		if r.hasPower {
			powered++
			f.PowerMaxW = math.Max(f.PowerMaxW, r.power)
			if prev != nil {
				if p, ok := prev.gpus[k]; ok && p.hasPower {
					integrated += (p.power + r.power) / 2 * s.at.Sub(prev.at).Seconds()
				}
			}
			prev = s
		}
		if r.hasUtil {
			utilSum += r.util
			utilN++
		}
		if r.hasFB {
			f.FBUsedMaxMiB = math.Max(f.FBUsedMaxMiB, r.fb)
		}
	}
	warning := ""
	switch {
	case a.hasEnergy && b.hasEnergy && b.energyMJ >= a.energyMJ && (b.energyMJ-a.energyMJ)/1000 <= maxPlausibleW*math.Max(span, 1):
		f.EnergyJ, f.EnergySource = (b.energyMJ-a.energyMJ)/1000, "counter"
	case powered < 2:
		return f, fmt.Sprintf("%s GPU %s: no plausible power or energy reading over the window (a reading past %d W, negative or not a number is refused): left out", k.endpoint, k.gpu, maxPlausibleW)
	default:
		f.EnergyJ, f.EnergySource = integrated, "integrated power"
		switch {
		case a.hasEnergy && b.hasEnergy && b.energyMJ < a.energyMJ:
			warning = fmt.Sprintf("%s GPU %s: the energy counter went back across the window; power integrated instead", k.endpoint, k.gpu)
		case a.hasEnergy && b.hasEnergy:
			warning = fmt.Sprintf("%s GPU %s: the energy counter advanced by an implausible %g J over %.1f s; power integrated instead", k.endpoint, k.gpu, (b.energyMJ-a.energyMJ)/1000, span)
		}
	}
	if span > 0 {
		f.PowerMeanW = f.EnergyJ / span
	}
	if utilN > 0 {
		f.UtilMeanPct, f.UtilKnown = utilSum/float64(utilN), true
	}
	return f, warning
}

// idleUtilPct is the utilisation under which a GPU served none of the
// load: the exporter lists every GPU of the node, and a node's idle ones
// would add their idle draw to the energy a token costs.
const idleUtilPct = 2.0

// idleGPU reports whether a GPU was idle over the window (utilisation
// read, and under idleUtilPct); a GPU whose utilisation is not exported
// counts.
func idleGPU(f results.GPUFigure) bool {
	return f.UtilKnown && f.UtilMeanPct < idleUtilPct
}
