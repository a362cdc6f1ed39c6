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
		if first := parts[0].MixClass; first != nil {
			judged := *first
			bounds, _, err := ParseBounds(first.SLO)
			if first.SLO == "" || err != nil {
				bounds = nil
			}
			judged.JudgeClass(mc, bounds)
			mc.MixClass = &judged
		}
		m.Classes[name] = mc
	}
	m.Fairness = JainFairness(m.Classes)
	return nil
}
