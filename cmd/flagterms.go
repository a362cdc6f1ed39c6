package cmd

import (
	"strings"

	"github.com/kneebench/knee/bench/driver"
)

// flagTerms says the library's errors of options in the flags' terms: the
// library names its fields, the user typed flags.
var flagTerms = map[error]string{
	driver.ErrLoadMode:       "give exactly one of --concurrency and --rate",
	driver.ErrUnbounded:      "give --requests or --duration",
	driver.ErrNoCallRate:     "calls need --rate (calls per second)",
	driver.ErrCallsUnbounded: "give --calls or --duration",
}

// message is err's text with every library error of options in it said
// in flags' terms. It walks joined and wrapped errors; a wrapper's own
// words are kept where they precede the wrapped error's, as %w leaves them.
func message(err error) string {
	if s, ok := flagTerms[err]; ok {
		return s
	}
	if s, ok := groupMessage(err.Error()); ok {
		return s
	}
	switch e := err.(type) {
	case interface{ Unwrap() []error }:
		parts := e.Unwrap()
		lines := make([]string, 0, len(parts))
		for _, p := range parts {
			lines = append(lines, message(p))
		}
		return strings.Join(lines, "\n")
	case interface{ Unwrap() error }:
		inner := e.Unwrap()
		if inner == nil {
			return err.Error()
		}
		whole, part := err.Error(), inner.Error()
		if prefix, found := strings.CutSuffix(whole, part); found {
			return prefix + message(inner)
		}
	}
	return err.Error()
}
