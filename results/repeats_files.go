package results

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// PoolPasses pools the levels of s, the first pass of a repeated sweep,
// with the same loads' levels in the other passes (results.PoolRepeats),
// count repeats having been asked for: a level measured twice or more is
// its pooled figures, a level some pass did not measure says how many
// did. The sweep's Repeats gives each pass's knees and their range; its
// own knees are found again on the pooled levels.
func PoolPasses(s *Sweep, passes []*Sweep, count int) {
	for i := range s.Levels {
		l := &s.Levels[i]
		var runs []*Run
		for _, p := range passes {
			// The same place when it holds the same load (a live
			// sweep's passes run the first's levels in order, a load
			// twice included), else wherever the load is.
			k := i
			if k >= len(p.Levels) || p.Levels[k].Load != l.Load {
				k = slices.IndexFunc(p.Levels, func(o Level) bool { return o.Load == l.Load })
			}
			if k >= 0 && p.Levels[k].Run != nil {
				runs = append(runs, p.Levels[k].Run)
			}
		}
		switch {
		case len(runs) >= 2:
			pooled, err := PoolRepeats(runs)
			if err != nil {
				l.Error = fmt.Sprintf("%d repeats measured, not pooled: %v", len(runs), err)
				continue
			}
			l.Run = pooled
			if len(runs) < count {
				pooled.Warnings = append(pooled.Warnings, fmt.Sprintf("only %d of the %d repeats measured this level", len(runs), count))
			}
		case len(runs) == 1 && l.Run != nil:
			l.Run.Warnings = append(l.Run.Warnings, fmt.Sprintf("only 1 of the %d repeats measured this level: it has no interval", count))
		}
	}
	s.Repeats = KneesAcrossPasses(passes, count)
	s.FindKnees()
}

// PoolRunFiles pools runs of one level measured one after another as runs
// of their own (knee run --seed S each, each perhaps merged from its
// shards) into the level's figures with intervals across them, as
// --repeat would have. They must have run one configuration but for the
// seed; a file already pooled, or one shard's part, is refused. Repeats
// that drew the same seed are pooled with a warning: their schedules and
// prompts were the same, so the interval leaves that variation out.
func PoolRunFiles(runs []*Run) (*Run, error) {
	if len(runs) < 2 {
		return nil, errors.New("pooling repeats needs two files or more")
	}
	for i, r := range runs {
		switch {
		case r.Repeats != nil:
			return nil, fmt.Errorf("file %d is already pooled from %d repeats: pool the repeats' own files", i+1, r.Repeats.Count)
		case shardPart(r):
			return nil, fmt.Errorf("file %d is shard %d of %d: merge each repeat's shards first (knee merge SHARD.json... -o REPEAT.json), then pool the merged files", i+1, r.Shard.Index, r.Shard.Count)
		}
		if i > 0 {
			if a, b := repeatKey(runs[0].Config), repeatKey(r.Config); a != b {
				return nil, fmt.Errorf("file %d ran another configuration than file 1 (%s differ): repeats of one level differ in their seed alone", i+1, configDiff(runs[0].Config, r.Config))
			}
		}
	}
	ordered := slices.Clone(runs)
	// They ran one after another: pooled in that order, repeat 1 first.
	slices.SortStableFunc(ordered, func(a, b *Run) int { return a.StartedAt.Compare(b.StartedAt) })
	m, err := PoolRepeats(ordered)
	if err != nil {
		return nil, err
	}
	seeds := make([]uint64, len(ordered))
	for i, r := range ordered {
		seeds[i] = r.Config.Seed
	}
	if same := sameSeeds(seeds); same != "" {
		m.Warnings = append(m.Warnings, same)
	}
	return m, nil
}

// PoolSweepFiles pools sweeps of one configuration but for the seed, run
// one after another (each perhaps merged from its shards), level by level
// as sweep --repeat pools its passes: the first to run gives the levels.
func PoolSweepFiles(sweeps []*Sweep) (*Sweep, error) {
	if len(sweeps) < 2 {
		return nil, errors.New("pooling repeats needs two files or more")
	}
	passes := slices.Clone(sweeps)
	slices.SortStableFunc(passes, func(a, b *Sweep) int { return a.StartedAt.Compare(b.StartedAt) })
	var seeds []uint64
	for i, s := range passes {
		if s.Repeats != nil {
			return nil, fmt.Errorf("sweep %q is already pooled from %d repeats: pool the repeats' own files", s.Label, s.Repeats.Count)
		}
		if i > 0 {
			if a, b := repeatKey(passes[0].Config), repeatKey(s.Config); a != b {
				return nil, fmt.Errorf("sweep %q ran another configuration than %q (%s differ): repeats of one sweep differ in their seed alone", s.Label, passes[0].Label, configDiff(passes[0].Config, s.Config))
			}
			if s.Axis != passes[0].Axis {
				return nil, fmt.Errorf("sweep %q swept %s, %q %s", s.Label, s.Axis, passes[0].Label, passes[0].Axis)
			}
		}
		for _, l := range s.Levels {
			if r := l.Run; r != nil && shardPart(r) {
				return nil, fmt.Errorf("sweep %q is shard %d of %d: merge each repeat's shards first, then pool the merged sweeps", s.Label, r.Shard.Index, r.Shard.Count)
			}
		}
		seeds = append(seeds, s.Config.Seed)
	}
	first := *passes[0]
	first.Levels = slices.Clone(passes[0].Levels)
	// Each pass is kept for its own knees; the first's copy is pooled.
	copies := make([]*Sweep, len(passes))
	for i, p := range passes {
		c := *p
		c.Levels = slices.Clone(p.Levels)
		copies[i] = &c
	}
	PoolPasses(&first, copies, len(passes))
	if same := sameSeeds(seeds); same != "" {
		for i := range first.Levels {
			if r := first.Levels[i].Run; r != nil && r.Repeats != nil {
				r.Warnings = append(r.Warnings, same)
			}
		}
	}
	return &first, nil
}

// shardPart reports whether r is one shard's part of a load, not yet
// merged with the others.
func shardPart(r *Run) bool { return r.Shard != nil && r.Shard.Count > 1 && r.MergedShards == 0 }

// repeatKey is a configuration as repeats must share it: all but the
// seed (and the base URL, as for shards).
func repeatKey(c Config) string {
	c.Seed = 0
	return configKey(c)
}

// sameSeeds warns of repeats that drew the same seed (seeds in the
// repeats' order), "" when none did.
func sameSeeds(seeds []uint64) string {
	seen := map[uint64][]string{}
	var order []uint64
	for i, seed := range seeds {
		if _, ok := seen[seed]; !ok {
			order = append(order, seed)
		}
		seen[seed] = append(seen[seed], fmt.Sprint(i+1))
	}
	var dup []string
	for _, s := range order {
		if len(seen[s]) > 1 {
			dup = append(dup, fmt.Sprintf("repeats %s (seed %d)", strings.Join(seen[s], ", "), s))
		}
	}
	if len(dup) == 0 {
		return ""
	}
	return fmt.Sprintf("%s drew the same seed: their schedules and prompts were the same, so the interval across repeats leaves that variation out and reads narrow; give each repeat its own --seed",
		strings.Join(dup, "; "))
}
