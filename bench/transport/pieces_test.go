package transport

import "testing"

func TestPieces(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want int
	}{
		{``, 0},
		{` me think about this`, 4},
		{`Hello, world!`, 4},
		{`line\nnext`, 2},
		{`say \"hi\"`, 4},
		{`caf\u00e9 au lait`, 4},
		{`naïve 3.14`, 4},
		{`<think>`, 3},
	} {
		if got := pieces([]byte(c.raw)); got != c.want {
			t.Errorf("pieces(%q) = %d, want %d", c.raw, got, c.want)
		}
	}
}
