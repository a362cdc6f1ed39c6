package cmd

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kneebench/knee/bench"
)

// TestMessageInFlagTerms checks that the library's errors of options
// reach the user in flags' terms, alone, wrapped and joined.
func TestMessageInFlagTerms(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{bench.ErrLoadMode, "give exactly one of --concurrency and --rate"},
		{bench.Load{Rate: 1, Concurrency: 2, Requests: 1, Burstiness: 1}.Validate(), "give exactly one of --concurrency and --rate"},
		{bench.Load{Rate: 1, Burstiness: 1}.Validate(), "give --requests or --duration (--step-duration in a sweep)"},
		{bench.Load{}.Validate(), "give exactly one of --concurrency and --rate\ngive --requests or --duration (--step-duration in a sweep)"},
		{bench.VoiceOptions{}.Validate(), "calls need --rate (calls per second)\ngive --calls or --duration (--step-duration in a sweep)"},
		{fmt.Errorf("http://h/v1/models: %w", bench.ErrNoModel), "http://h/v1/models: the server lists no model; give --model"},
		{usageErr("%w", bench.ErrUnbounded), "give --requests or --duration (--step-duration in a sweep)"},
		{withCode(ExitRuntime, errors.New("plain")), "plain"},
		{fmt.Errorf("level 2: %w", errors.Join(bench.ErrUnbounded, errors.New("other"))), "level 2: give --requests or --duration (--step-duration in a sweep)\nother"},
	} {
		if got := message(tc.err); got != tc.want {
			t.Errorf("message(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
