package results

import "fmt"

// SweepRepeats says how a sweep's knees fell across its repeats: each
// pass's own knees, found on that pass's levels alone, and their range.
// The sweep's own knees are found on the pooled levels.
type SweepRepeats struct {
	Count int `json:"count"`
	// Passes is how many passes over the levels ran (fewer than Count
	// when the sweep was cut).
	Passes     int         `json:"passes"`
	Method     string      `json:"method"`
	SLO        KneesAcross `json:"slo_knee"`
	Saturation KneesAcross `json:"saturation"`
	// Classes are a mix's classes' own knees in every pass, by class.
	Classes map[string]*KneesAcross `json:"class_knees,omitempty"`
}

// KneesAcross is one knee in every pass: Loads[k] is pass k's (nil: not
// found), Low and High the range of those found, Beyond how many passes
// met the SLO at every level judged (their SLO knee is only the highest
// level, not a limit).
type KneesAcross struct {
	Loads  []*float64 `json:"loads"`
	Low    *float64   `json:"low,omitempty"`
	High   *float64   `json:"high,omitempty"`
	Beyond int        `json:"beyond_levels,omitempty"`
}

// Range says the range in words, loads in unit: "3–4/s (found in 3 of 3
// repeats)".
func (k KneesAcross) Range(unit string) string {
	found := 0
	for _, l := range k.Loads {
		if l != nil {
			found++
		}
	}
	if k.Low == nil {
		return fmt.Sprintf("none found in %d repeats", len(k.Loads))
	}
	r := fmt.Sprintf("%g", *k.Low)
	if *k.High != *k.Low {
		r = fmt.Sprintf("%g–%g", *k.Low, *k.High)
	}
	r += fmt.Sprintf("%s (found in %d of %d repeats", LoadUnit(*k.High, unit), found, len(k.Loads))
	if k.Beyond > 0 {
		r += fmt.Sprintf("; %d met the SLO at every level", k.Beyond)
	}
	return r + ")"
}

// KneesAcrossPasses finds each pass's knees on its own levels and their
// range over the passes.
func KneesAcrossPasses(passes []*Sweep, count int) *SweepRepeats {
	rp := &SweepRepeats{Count: count, Passes: len(passes),
		Method: "each repeat's knees found on its own levels; the sweep's own knees are the pooled levels'"}
	for _, p := range passes {
		p.FindKnees()
		rp.SLO.add(p.Knees.SLO, p.Knees.SLONotReached)
		rp.Saturation.add(p.Knees.Saturation, false)
		for _, ck := range p.ClassKnees {
			if rp.Classes == nil {
				rp.Classes = map[string]*KneesAcross{}
			}
			k := rp.Classes[ck.Class]
			if k == nil {
				k = &KneesAcross{}
				rp.Classes[ck.Class] = k
			}
			// A class that met its SLO at every level judged has the
			// highest of them for its knee, as the SLO knee has.
			k.add(ck.Knee, ck.Knee != nil && ck.FirstMissed == nil)
		}
	}
	return rp
}

func (k *KneesAcross) add(knee *Knee, beyond bool) {
	if knee == nil {
		k.Loads = append(k.Loads, nil)
		return
	}
	load := knee.Load
	k.Loads = append(k.Loads, &load)
	if beyond {
		k.Beyond++
	}
	if k.Low == nil || load < *k.Low {
		k.Low = &load
	}
	if k.High == nil || load > *k.High {
		k.High = &load
	}
}
