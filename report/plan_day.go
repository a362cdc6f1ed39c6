package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kneebench/knee/results"
)

// planDay writes a day plan: one line on the day and the choice, then a
// row per policy, the static fleet for the peak first.
func planDay(w io.Writer, d *results.DayPlan) error {
	served := fmt.Sprintf("served by %s (one replica meets the SLO up to %s/s)", d.Config, loadText(d.Capacity))
	if d.Config == "" {
		served = "served by none"
	}
	fmt.Fprintf(w, "\nday: %s, %s, peak %s/s, mean %s/s, %s\n", d.Trace, daySpan(d), loadText(d.PeakRate), loadText(d.MeanRate), served)
	if len(d.Policies) == 0 {
		for _, n := range d.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
		return nil
	}
	static := d.Policies[0]
	fmt.Fprintf(w, "answer for the day: %s\n\n", dayChoice(d))
	var rows [][]string
	for _, p := range d.Policies {
		name := p.Name
		if p.Name == d.Cheapest {
			name += " ←"
		}
		rows = append(rows, []string{name, num(p.GPUHours, 1), money(p.Cost), saving(p.GPUHours, static.GPUHours),
			fmt.Sprintf("%d/%d", p.MinutesMet, p.Minutes), fmt.Sprintf("%.2f%%", 100*p.Attainment), strconv.Itoa(p.PeakReplicas),
			fmt.Sprintf("%d/%d", p.ScaleUps, p.ScaleDowns), missedText(p.Missed)})
	}
	if err := renderTable(w, []string{"policy", "GPU-h", "$", "vs static", "minutes met", "requests met", "peak replicas", "ups/downs", "missed (minutes from the start)"}, rows); err != nil {
		return err
	}
	for _, p := range d.Policies[1:] {
		fmt.Fprintf(w, "%s: %s\n", p.Name, p.Policy)
	}
	fmt.Fprintf(w, "minutes met: minutes every arrival of which met the SLO; requests met: the share of the day's arrivals that did; the chosen policy (←) is the cheapest meeting it in %.1f%% of minutes\n", 100*d.MinAttainment)
	for _, n := range d.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// dayChoice says which policy the day chose, against static provisioning
// for the peak.
func dayChoice(d *results.DayPlan) string {
	if len(d.Policies) == 0 {
		return "none: no day simulated"
	}
	static := d.Policies[0]
	for _, p := range d.Policies {
		if p.Name == d.Cheapest {
			return fmt.Sprintf("autoscale %s — %s GPU-hours%s, against %s static for the peak (%s); %.1f%% of minutes met the SLO",
				p.Name, num(p.GPUHours, 1), dollars(p.Cost), num(static.GPUHours, 1), saving(p.GPUHours, static.GPUHours), 100*p.MinuteShare())
		}
	}
	return fmt.Sprintf("no autoscaling policy met the SLO in %.1f%% of the day's minutes: static for the peak (%d replicas, %s GPU-hours%s) does",
		100*d.MinAttainment, static.PeakReplicas, num(static.GPUHours, 1), dollars(static.Cost))
}

// missedText lists a policy's first missed spans.
func missedText(spans []results.MissedSpan) string {
	if len(spans) == 0 {
		return "-"
	}
	var parts []string
	for i, s := range spans {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("+%d more", len(spans)-3))
			break
		}
		at := clock(s.From)
		if s.To > s.From {
			at += "–" + clock(s.To+1)
		}
		parts = append(parts, at+" "+s.Reason)
	}
	return strings.Join(parts, "; ")
}

// clock writes minutes from the start as H:MM (D+H:MM past a day).
func clock(minutes int) string {
	d, h, m := minutes/1440, minutes%1440/60, minutes%60
	if d > 0 {
		return fmt.Sprintf("%d+%d:%02d", d, h, m)
	}
	return fmt.Sprintf("%d:%02d", h, m)
}

// saving is a policy's GPU-hours against the static fleet's.
func saving(h, static float64) string {
	if static <= 0 {
		return "-"
	}
	return fmt.Sprintf("%+.0f%%", 100*(h/static-1))
}

// dollars is ", $X" for a cost, or nothing.
func dollars(v float64) string {
	if v <= 0 {
		return ""
	}
	return ", $" + money(v)
}

// daySpan writes a day plan's span: 24h, 50m, 1h1m.
func daySpan(d *results.DayPlan) string {
	return results.ShortDuration(time.Duration(d.DurationS * float64(time.Second)).Round(time.Second))
}
