package cmd

import (
	"github.com/kneebench/knee/results"
	"github.com/spf13/cobra"
)

// session is what a live command holds while it measures: the target
// (a built-in simulator started for it), the sinks opened on it and the
// records file.
type session struct {
	tgt     *resolved
	records *results.CheckedWriter
	closers []func()
}

// openSession checks the sinks, resolves the target, opens the sinks on
// it, checks the longest request fits the target's context and opens the
// records file, in that order; close undoes what was opened.
func openSession(c *cobra.Command, target *targetFlags, sim *simFlags, sinks *sinkFlags, load *loadFlags, records string) (*session, error) {
	if err := sinks.check(); err != nil {
		return nil, err
	}
	s := &session{}
	tgt, err := target.resolve(c.Context(), c, sim)
	if err != nil {
		return nil, err
	}
	s.tgt, s.closers = tgt, append(s.closers, tgt.stop)
	if err := sinks.open(c, target.sinkTarget(c.Context(), tgt)); err != nil {
		s.close()
		return nil, err
	}
	s.closers = append(s.closers, func() { sinks.finish(c) })
	if err := usage(tgt.FitsContext(load.Longest())); err != nil {
		s.close()
		return nil, err
	}
	if s.records, err = openRecords(c, records); err != nil {
		s.close()
		return nil, err
	}
	s.closers = append(s.closers, func() { s.records.Close() })
	return s, nil
}

// close undoes what openSession opened, last first.
func (s *session) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}
