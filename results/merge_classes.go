package results

import (
	"fmt"
	"maps"
	"slices"
)

// mergeClasses merges a mix's classes shard by shard, each as a run of
// its own: the same exact merge, over the class's requests alone, then
// judged again against the class's SLO.
func mergeClasses(m *Run, shards []*Run) error {
	names := map[string]bool{}
	for _, s := range shards {
		for name := range s.Classes {
			names[name] = true
		}
	}
	if len(names) == 0 {
		return nil
	}
	m.Classes = map[string]*Run{}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		parts := make([]*Run, 0, len(shards))
		for i, s := range shards {
			c := s.Classes[name]
			if c == nil {
				return fmt.Errorf("shard %d has no class %q: the shards ran different mixes", i, name)
			}
			cp := *c
			cp.Shard, cp.StartedAt, cp.WindowStartedAt, cp.WindowSeconds = s.Shard, s.StartedAt, s.WindowStartedAt, s.WindowSeconds
			parts = append(parts, &cp)
		}
		mc, err := MergeRuns(parts)
		if err != nil {
			return fmt.Errorf("class %s: %w", name, err)
		}
		mc.Config, mc.Shard = Config{}, nil
		judgeClass(mc, parts[0].MixClass)
		m.Classes[name] = mc
	}
	m.Fairness = JainFairness(m.Classes)
	return nil
}

// poolClasses pools a mix's classes repeat by repeat, each as a level of
// its own (PoolRepeats over the class's requests alone, with its interval
// across the repeats), then judged again against the class's SLO. Every
// repeat ran the same mix, so a class one lacks is an error.
func poolClasses(m *Run, runs []*Run) error {
	names := slices.Sorted(maps.Keys(runs[0].Classes))
	for i, r := range runs {
		if len(r.Classes) != len(names) || !allIn(names, r.Classes) {
			return fmt.Errorf("repeat %d's classes differ from repeat 1's: the repeats ran different mixes", i+1)
		}
	}
	if len(names) == 0 {
		return nil
	}
	m.Classes = map[string]*Run{}
	for _, name := range names {
		parts := make([]*Run, 0, len(runs))
		for _, r := range runs {
			// A class's run keeps its own counts and histograms; its window
			// is its repeat's.
			cp := *r.Classes[name]
			cp.StartedAt, cp.WindowStartedAt, cp.WindowSeconds, cp.Classes = r.StartedAt, r.WindowStartedAt, r.WindowSeconds, nil
			cp.Config.Seed, cp.Health = r.Config.Seed, r.Health
			parts = append(parts, &cp)
		}
		pc, err := PoolRepeats(parts)
		if err != nil {
			return fmt.Errorf("class %s: %w", name, err)
		}
		pc.Config = Config{}
		judgeClass(pc, parts[0].MixClass)
		m.Classes[name] = pc
	}
	m.Fairness = JainFairness(m.Classes)
	return nil
}

// allIn reports whether every name is a key of classes.
func allIn(names []string, classes map[string]*Run) bool {
	for _, n := range names {
		if classes[n] == nil {
			return false
		}
	}
	return true
}

// judgeClass judges a merged or pooled class's run against its class's
// SLO, keeping the class's description.
func judgeClass(c *Run, class *MixClass) {
	if class == nil {
		return
	}
	judged := *class
	bounds, _, err := ParseBounds(class.SLO)
	if class.SLO == "" || err != nil {
		bounds = nil
	}
	judged.JudgeClass(c, bounds)
	c.MixClass = &judged
}
