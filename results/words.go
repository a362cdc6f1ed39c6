package results

import (
	"fmt"

	"github.com/agnivade/levenshtein"
)

// The words every room says a count, a load or a near miss in.

// Plural is "1 request" or "3 requests": a count as a sentence says it.
func Plural[N ~int | ~int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// WasWere is the verb a count of n takes: "1 arrival was", "3 were".
func WasWere[N ~int | ~int64](n N) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// LoadUnit is a load's unit as a load of v takes it: " stream" for one
// stream, the unit as it is otherwise (" streams", "/s").
func LoadUnit(v float64, unit string) string {
	if v == 1 && unit == " streams" {
		return " stream"
	}
	return unit
}

// Nearest is the candidate a typo or two from name ("" when none is): at
// most two edits, and fewer than name has letters, so that a one-letter
// slip is not matched to any short word.
func Nearest(name string, candidates []string) string {
	best, bestD := "", min(3, len(name))
	for _, c := range candidates {
		if d := levenshtein.ComputeDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
