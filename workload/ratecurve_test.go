package workload

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseRateCurve(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		steps    []RateStep
		end      time.Duration
	}{
		{"seconds with a header", "time,rate\n0,2\n60,4.5\n120,1\n", []RateStep{{0, 2}, {time.Minute, 4.5}, {2 * time.Minute, 1}}, 3 * time.Minute},
		{"clock times", "08:00,1\n08:05,3\n", []RateStep{{0, 1}, {5 * time.Minute, 3}}, 10 * time.Minute},
		{"past midnight", "23:50,1\n00:10,2\n", []RateStep{{0, 1}, {20 * time.Minute, 2}}, 40 * time.Minute},
		{"instants", "2026-12-01T10:00:00Z,5\n2026-12-01T10:00:30Z,6\n", []RateStep{{0, 5}, {30 * time.Second, 6}}, time.Minute},
		{"comments, blank lines and spaces", "# a day\n\n0, 1\n\n30 ,2\n", []RateStep{{0, 1}, {30 * time.Second, 2}}, time.Minute},
		{"one line holds a minute", "0,7\n", []RateStep{{0, 7}}, time.Minute},
		{"clock with seconds", "00:00:00,1\n00:00:10,2\n", []RateStep{{0, 1}, {10 * time.Second, 2}}, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseRateCurve(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Steps) != len(tc.steps) || c.End != tc.end {
				t.Fatalf("got %+v ending %s, want %+v ending %s", c.Steps, c.End, tc.steps, tc.end)
			}
			for i := range c.Steps {
				if c.Steps[i] != tc.steps[i] {
					t.Errorf("step %d = %+v, want %+v", i, c.Steps[i], tc.steps[i])
				}
			}
		})
	}
}

func TestParseRateCurveErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "no lines"},
		{"time,rate\n", "no lines"},
		{"0,1\n0,2\n", "line 2"},
		{"60,1\n30,2\n", "time order"},
		{"0,NaN\n", "rate"},
		{"0,-1\n", "rate"},
		{"0,Inf\n", "rate"},
		{"0,1,2\n", "two columns"},
		{"0,1\n08:00,2\n", "mix"},
		{"soon,1\n", "HH:MM"},
		{"1e9,1\n", "week"},
		{"NaN,1\n", "week"},
		{"0,1\n\"unclosed,2\n", "rate curve"},
	} {
		_, err := ParseRateCurve(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.in, err, tc.want)
		}
	}
}

func TestRateCurveFigures(t *testing.T) {
	c := RateCurve{Steps: []RateStep{{0, 2}, {time.Minute, 8}, {3 * time.Minute, 0}}, End: 4 * time.Minute}
	for _, tc := range []struct {
		at   time.Duration
		want float64
	}{{-time.Second, 0}, {0, 2}, {59 * time.Second, 2}, {time.Minute, 8}, {179 * time.Second, 8}, {3 * time.Minute, 0}, {4 * time.Minute, 0}} {
		if got := c.RateAt(tc.at); got != tc.want {
			t.Errorf("rate at %s = %g, want %g", tc.at, got, tc.want)
		}
	}
	if c.Peak() != 8 || math.Abs(c.Mean()-(2+16)/4.0) > 1e-12 {
		t.Errorf("peak %g mean %g, want 8 and 4.5", c.Peak(), c.Mean())
	}
}

func TestReadRateCurveOfATrace(t *testing.T) {
	// Mooncake's lines: timestamps in ms. Three in the first minute, one in
	// the third.
	in := `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}
{"timestamp": 20000, "input_length": 10, "output_length": 2, "hash_ids": [1]}
{"timestamp": 59999, "input_length": 10, "output_length": 2, "hash_ids": [1]}
{"timestamp": 150000, "input_length": 10, "output_length": 2, "hash_ids": [1]}
`
	c, err := ReadRateCurve(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{3.0 / 60, 0, 1.0 / 60}
	if len(c.Steps) != len(want) || c.End != 3*time.Minute {
		t.Fatalf("steps %+v ending %s, want three minutes", c.Steps, c.End)
	}
	for i, w := range want {
		if math.Abs(c.Steps[i].Rate-w) > 1e-12 {
			t.Errorf("minute %d: %g/s, want %g", i, c.Steps[i].Rate, w)
		}
	}
	if _, err := ReadRateCurve(strings.NewReader(`{"prompt": "no time"}` + "\n")); err == nil || !strings.Contains(err.Error(), "timestamps") {
		t.Errorf("untimed lines: %v, want an error about timestamps", err)
	}
	if _, err := ReadRateCurve(strings.NewReader("\x00\x00\x00")); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("binary: %v, want an error about a NUL byte", err)
	}
}

// FuzzReadRateCurve: any bytes give a curve or an error, never a panic;
// a curve's steps go forward in time, every rate finite and in bounds.
func FuzzReadRateCurve(f *testing.F) {
	for _, s := range []string{"time,rate\n0,1\n60,2\n", "08:00,1\n23:59,2\n00:01,3\n", "2026-12-01T10:00:00Z,5\n", `{"timestamp": 5, "input_length": 1, "output_length": 1}`, "0,1\n\"x\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ReadRateCurve(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		for i, s := range c.Steps {
			if math.IsNaN(s.Rate) || s.Rate < 0 || s.Rate > maxCurveRate || (i > 0 && s.At <= c.Steps[i-1].At) || s.At >= c.End {
				t.Fatalf("bad curve %+v ending %s", c.Steps, c.End)
			}
		}
	})
}
