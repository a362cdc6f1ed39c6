package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTablesWithin: a table wider than the width is written as several,
// each within it, each led by the key columns that name its rows, every
// other column once and in order; a table that fits is written whole.
func TestTablesWithin(t *testing.T) {
	header := []string{"name", "a", "b", "c", "d"}
	rows := [][]string{{"row-one", strings.Repeat("x", 30), strings.Repeat("y", 30), strings.Repeat("z", 30), "w"}}
	var b strings.Builder
	if err := renderTablesWithin(&b, 60, 1, header, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > 60 {
			t.Errorf("a line of %d columns: %q", n, line)
		}
	}
	if n := strings.Count(out, " name "); n != 3 {
		t.Errorf("%d tables, want 3 (a, b, c with d):\n%s", n, out)
	}
	var cols []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " name ") {
			for _, c := range strings.Split(strings.Trim(line, "|"), "|")[1:] {
				cols = append(cols, strings.TrimSpace(c))
			}
		}
	}
	if strings.Join(cols, " ") != "a b c d" {
		t.Errorf("columns %q, want a, b, c and d once each in order", cols)
	}
	b.Reset()
	if err := renderTablesWithin(&b, 200, 1, header, rows); err != nil || strings.Count(b.String(), " name ") != 1 {
		t.Errorf("a table that fits split (%v):\n%s", err, b.String())
	}
}
