package cmd

import (
	"strings"
	"testing"
)

// TestSinkFlagsSayWhatIsWrong: --export and --dashboard are read before
// anything runs, each refusal naming the flag and what it wants.
func TestSinkFlagsSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		exports []string
		dash    string
		want    string
	}{
		{exports: []string{"statsd=127.0.0.1:8125"}, want: "want prometheus=ADDR or otlp=URL"},
		{exports: []string{"prometheus"}, want: "--export prometheus="},
		{exports: []string{"prometheus=9090", "prometheus=9091"}, want: "given twice"},
		{exports: []string{"otlp=ftp://127.0.0.1:4318"}, want: "--export otlp="},
		{dash: "not a port", want: "--dashboard"},
		{exports: []string{"prometheus=9090", "otlp=http://127.0.0.1:4318"}, dash: "8080"},
	} {
		f := sinkFlags{exports: tc.exports, dash: tc.dash}
		err := f.check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v %q: %v", tc.exports, tc.dash, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v %q: %v, want an error saying %q", tc.exports, tc.dash, err, tc.want)
		case tc.want == "" && len(f.wanted) != len(tc.exports):
			t.Errorf("%v: %d sinks wanted", tc.exports, len(f.wanted))
		}
	}
}
