package results

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
	"strings"
	"time"
)

// DayPlan is a plan over a day of traffic (knee plan --trace): one
// configuration's fleet simulated through a rate curve under autoscaling
// policies and under static provisioning for the peak, with what each
// costs and how much of the day it met the SLO.
type DayPlan struct {
	// Trace is the rate curve's file; DurationS its span, PeakRate and
	// MeanRate its highest and mean rates (arrivals per second).
	Trace     string  `json:"trace"`
	DurationS float64 `json:"duration_s"`
	PeakRate  float64 `json:"peak_rate"`
	MeanRate  float64 `json:"mean_rate"`
	// Config is the plan row simulated (the cheapest meeting the SLO at
	// the peak), TP its GPUs per replica and PricePerGPUHour its price.
	Config          string  `json:"config"`
	TP              int     `json:"tp"`
	PricePerGPUHour float64 `json:"price_per_gpu_hour,omitempty"`
	// Curve is one replica's predicted behaviour by its load, which the
	// day is judged on: Capacity the largest load meeting the SLO,
	// Saturation the most it completes per second.
	Capacity   float64      `json:"per_replica_capacity"`
	Saturation float64      `json:"per_replica_saturation"`
	Curve      []DayCurvePt `json:"curve"`
	// Policies are the static fleet for the peak first, then every
	// autoscaling policy; Cheapest names the cheapest policy whose share
	// of minutes meeting the SLO reached MinAttainment ("" when none).
	Policies      []DayPolicy `json:"policies"`
	Cheapest      string      `json:"cheapest,omitempty"`
	MinAttainment float64     `json:"min_attainment"`
	Notes         []string    `json:"notes,omitempty"`
}

// DayCurvePt is one replica predicted at a load: requests waiting for a
// first token on average (Little's law over the queue wait), and the
// share of its binding SLO bound left (negative: past it).
type DayCurvePt struct {
	Load    float64 `json:"load"`
	Waiting float64 `json:"waiting"`
	Slack   float64 `json:"slack"`
	Meets   bool    `json:"meets"`
}

// DayPolicy is a fleet through the day under one policy.
type DayPolicy struct {
	// Name is the policy as given; Policy it in full, every default said.
	Name   string `json:"name"`
	Policy string `json:"policy"`
	Static bool   `json:"static,omitempty"`
	// GPUHours counts every replica from the moment it is ordered (a
	// loading replica holds its GPUs); Cost is them at the GPU's price.
	GPUHours float64 `json:"gpu_hours"`
	Cost     float64 `json:"cost,omitempty"`
	// Attainment is the share of the day's arrivals that came while the
	// fleet met the SLO; MinutesMet of Minutes met it throughout.
	Attainment   float64 `json:"attainment"`
	Minutes      int     `json:"minutes"`
	MinutesMet   int     `json:"minutes_met"`
	PeakReplicas int     `json:"peak_replicas"`
	MeanReplicas float64 `json:"mean_replicas"`
	ScaleUps     int     `json:"scale_ups"`
	ScaleDowns   int     `json:"scale_downs"`
	// Missed are the runs of minutes that missed, by why; MissedBy the
	// arrivals that came while the fleet missed, by why, second by
	// second.
	Missed   []MissedSpan       `json:"missed,omitempty"`
	MissedBy map[string]float64 `json:"missed_requests_by_reason,omitempty"`
	Timeline []DayMinute        `json:"minutes_timeline"`
}

// MinuteShare is the share of the day's minutes that met the SLO.
func (p DayPolicy) MinuteShare() float64 {
	if p.Minutes == 0 {
		return 0
	}
	return float64(p.MinutesMet) / float64(p.Minutes)
}

// MissedSpan is a run of minutes, From to To inclusive, that missed the
// SLO for one reason (the one behind most of their missed arrivals), and
// the arrivals that came while it was missed.
type MissedSpan struct {
	From     int     `json:"from_minute"`
	To       int     `json:"to_minute"`
	Reason   string  `json:"reason"`
	Requests float64 `json:"requests"`
}

// Why a fleet missed the SLO.
const (
	// MissScalingLag: the rate rose and the policy had not yet seen it
	// (its interval, its observation window).
	MissScalingLag = "scaling lag"
	// MissColdStart: replicas were ordered and still loading.
	MissColdStart = "cold start"
	// MissTarget: the policy's target lets each replica carry more than
	// it meets the SLO at.
	MissTarget = "target"
	// MissMaxReplicas: the load needs more replicas than the policy's
	// most.
	MissMaxReplicas = "max replicas"
	// MissBacklog: enough replicas, but the queue built while there were
	// too few was still draining.
	MissBacklog = "backlog"
)

// DayMinute is one minute: its mean rate, the replicas serving and
// loading at its end, and the share of its arrivals that met the SLO.
type DayMinute struct {
	Minute     int     `json:"minute"`
	Rate       float64 `json:"rate"`
	Replicas   int     `json:"replicas"`
	Loading    int     `json:"loading,omitempty"`
	Attainment float64 `json:"attainment"`
}

// DayCSVHeader names the columns of a day plan's CSV: one line per
// minute and policy.
var DayCSVHeader = []string{"policy", "minute", "rate", "replicas", "loading", "attainment"}

// CSV writes the day's minutes, policy by policy.
func (d *DayPlan) CSV() ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(DayCSVHeader); err != nil {
		return nil, err
	}
	f := func(v float64) string { return strconv.FormatFloat(finite(v), 'f', -1, 64) }
	for _, p := range d.Policies {
		for _, m := range p.Timeline {
			if err := w.Write([]string{p.Name, strconv.Itoa(m.Minute), f(m.Rate), strconv.Itoa(m.Replicas), strconv.Itoa(m.Loading), f(m.Attainment)}); err != nil {
				return nil, err
			}
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// finite is v, or 0 for NaN or an infinity: no file holds either.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// ShortDuration writes d without trailing zero units: 24h, 50m, 1h1m,
// 1m8s, 15s.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
