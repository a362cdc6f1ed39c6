// Package report renders knee's results for people: terminal tables, plots
// and comparisons. It reads the results package's data model and never
// measures anything itself.
package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// newTable returns a plain ASCII table with right-aligned numeric columns
// after the first, and headers left as written.
func newTable(w io.Writer, cols int) *tablewriter.Table {
	align := make([]tw.Align, cols)
	for i := range align {
		align[i] = tw.AlignRight
	}
	align[0] = tw.AlignLeft
	return tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
}

// renderTablesWithin writes a table of at most width columns: when the
// whole is wider, as several, each the first keys columns (what names a
// row) and as many of the rest, in order, as fit.
func renderTablesWithin(w io.Writer, width, keys int, header []string, rows [][]string) error {
	pick := func(cols []int) ([]string, [][]string) {
		h := make([]string, len(cols))
		for k, c := range cols {
			h[k] = header[c]
		}
		rs := make([][]string, len(rows))
		for r, row := range rows {
			rs[r] = make([]string, len(cols))
			for k, c := range cols {
				rs[r][k] = row[c]
			}
		}
		return h, rs
	}
	render := func(cols []int) (string, int, error) {
		var b strings.Builder
		h, rs := pick(cols)
		err := renderWhole(&b, h, rs)
		widest := 0
		for _, line := range strings.Split(b.String(), "\n") {
			widest = max(widest, utf8.RuneCountInString(line))
		}
		return b.String(), widest, err
	}
	all := make([]int, len(header))
	for k := range all {
		all[k] = k
	}
	if out, wide, err := render(all); err != nil || wide <= width {
		if err == nil {
			_, err = io.WriteString(w, out)
		}
		return err
	}
	base := all[:keys]
	for next := keys; next < len(header); {
		cols := append(slices.Clone(base), next)
		next++
		for ; next < len(header); next++ {
			if _, wide, _ := render(append(slices.Clone(cols), next)); wide > width {
				break
			}
			cols = append(cols, next)
		}
		out, _, err := render(cols)
		if err != nil {
			return err
		}
		if cols[keys] > keys { // a table after the first: a blank line between
			out = "\n" + out
		}
		if _, err := io.WriteString(w, out); err != nil {
			return err
		}
	}
	return nil
}

// renderTable writes a table with the given header and rows, as several
// led by its first column when it is wider than the report's columns.
func renderTable(w io.Writer, header []string, rows [][]string) error {
	return renderTablesWithin(w, ReportColumns, 1, header, rows)
}

// renderWhole writes a table with the given header and rows, however
// wide.
func renderWhole(w io.Writer, header []string, rows [][]string) error {
	t := newTable(w, len(header))
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}

// ms formats milliseconds with a precision that suits their size: knee
// does not claim sub-0.1 ms accuracy from a Go client.
func ms(v float64) string {
	digits := 0
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a < 10:
		digits = 2
	case a < 1000:
		digits = 1
	}
	out := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Trim(out, "-0.") == "" {
		return strings.TrimPrefix(out, "-") // -0.00 reads as a sign where there is none
	}
	return out
}

// num formats a count or rate with thousands separators.
func num(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var b strings.Builder
	for i, ch := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	out := b.String()
	if neg {
		out = "-" + out
	}
	if frac != "" {
		out += "." + frac
	}
	return out
}

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
