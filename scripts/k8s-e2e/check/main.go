// Command check compares a merged result of shards with one process's run
// of the same schedule: the same requests, arrivals and tokens exactly, and
// percentiles within what two samples of one load differ by. It also
// wants the late shard named by the merge. It exits 1 with every
// difference listed.
package main

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/kneebench/knee/results"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: check SINGLE.json MERGED.json LATE-SHARD-INDEX")
		os.Exit(2)
	}
	one, err := results.ReadRun(os.Args[1])
	if err != nil {
		fail(err)
	}
	m, err := results.ReadRun(os.Args[2])
	if err != nil {
		fail(err)
	}
	var bad []string
	for _, c := range []struct {
		what      string
		one, more int64
	}{
		{"requests sent", one.Requests.Sent, m.Requests.Sent},
		{"requests ok", one.Requests.OK, m.Requests.OK},
		{"failed", one.Requests.Failed, m.Requests.Failed},
		{"window arrivals", one.Arrivals.WindowArrivals, m.Arrivals.WindowArrivals},
		{"input tokens", one.Tokens.InputTotal, m.Tokens.InputTotal},
		{"output tokens", one.Tokens.OutputTotal, m.Tokens.OutputTotal},
	} {
		fmt.Printf("%-16s one process %8d   merged shards %8d\n", c.what, c.one, c.more)
		if c.one != c.more {
			bad = append(bad, fmt.Sprintf("%s: one process %d, merged %d", c.what, c.one, c.more))
		}
	}
	if one.Requests.OK == 0 {
		bad = append(bad, "the one-process run completed no request")
	}
	// Two samples of one load on a shared two-core node: the medians of
	// time from the send agree within half, or 20 ms.
	for _, c := range []struct {
		what      string
		one, more float64
	}{
		{"TTFT p50 ms", one.Stats.TTFT.P50, m.Stats.TTFT.P50},
		{"E2E p50 ms", one.Stats.E2E.P50, m.Stats.E2E.P50},
	} {
		fmt.Printf("%-16s one process %8.1f   merged shards %8.1f\n", c.what, c.one, c.more)
		if d := math.Abs(c.one - c.more); d > 20 && d > 0.5*c.one {
			bad = append(bad, fmt.Sprintf("%s: one process %.1f, merged %.1f", c.what, c.one, c.more))
		}
	}
	late := "shard " + os.Args[3] + " started"
	said := false
	for _, w := range m.Warnings {
		fmt.Println("merge warning:", w)
		said = said || strings.Contains(w, late)
	}
	if !said {
		bad = append(bad, "the merge does not name the late shard ("+late+" …)")
	}
	if len(bad) > 0 {
		fmt.Fprintln(os.Stderr, "e2e check failed:\n  "+strings.Join(bad, "\n  "))
		os.Exit(1)
	}
	fmt.Println("e2e check passed: the merged shards sent what one process sent")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "check:", err)
	os.Exit(2)
}
