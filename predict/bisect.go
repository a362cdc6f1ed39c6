package predict

import "math"

// Bisect finds the largest load in [lo, hi] for which meets holds, to
// within step(load), assuming that a load that meets the SLO has every
// lighter one meet it too. It starts at from: up by doubling while it
// meets, down by halving while it does not; then halves the interval
// between the last load that met and the first that did not. It returns 0
// and the lightest load's reason when even lo does not meet.
func Bisect(from, lo, hi float64, step func(float64) float64, round func(float64) float64,
	meets func(float64) (bool, string, error)) (float64, string, error) {
	from = round(math.Min(math.Max(from, lo), hi))
	ok, why, err := meets(from)
	if err != nil {
		return 0, "", err
	}
	var good, bad float64
	if ok {
		good = from
		for x := round(from * 2); ; x = round(x * 2) {
			if x > hi {
				return good, "", nil
			}
			ok, _, err := meets(x)
			if err != nil {
				return 0, "", err
			}
			if !ok {
				bad = x
				break
			}
			good = x
		}
	} else {
		bad = from
		for x := round(from / 2); ; x = round(x / 2) {
			if x < lo || x >= bad {
				return 0, why, nil
			}
			ok, w, err := meets(x)
			if err != nil {
				return 0, "", err
			}
			if ok {
				good = x
				break
			}
			bad, why = x, w
		}
	}
	for bad-good > step(good) {
		mid := round((good + bad) / 2)
		if mid <= good || mid >= bad {
			break
		}
		ok, _, err := meets(mid)
		if err != nil {
			return 0, "", err
		}
		if ok {
			good = mid
		} else {
			bad = mid
		}
	}
	return good, "", nil
}
