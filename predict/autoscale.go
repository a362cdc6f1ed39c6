package predict

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kneebench/knee/results"
)

// Autoscaling targets: what a policy keeps each replica at.
const (
	// TargetUtilisation keeps each replica's load at a share of the load
	// it meets the SLO at (its capacity): 0.8 leaves a fifth spare.
	TargetUtilisation = "utilisation"
	// TargetQueue keeps the requests waiting for a first token per replica
	// at most this many (vllm:num_requests_waiting, as KEDA scales on).
	TargetQueue = "queue"
	// TargetSLOMargin keeps the binding SLO bound at least this share
	// under its limit (slo-margin=0.2: p95 TTFT at most 80% of its bound).
	TargetSLOMargin = "slo-margin"
	// targetStatic holds a fixed fleet: the baseline.
	targetStatic = "static"
)

// Policy is an autoscaler: every Interval it looks at the mean rate (and
// queue) of the interval just past, and asks for the fewest replicas
// that keep its target there, within Min and Max. Replicas asked for
// serve after Delay (the model's load time); it scales down to the most
// it asked for over the last Cooldown, and not within Cooldown of its
// last scaling (the stabilisation window a Kubernetes HPA applies); it
// adds at most as many replicas as it has, or four, a look (an HPA's
// default scale-up rule).
type Policy struct {
	// Name is the policy as given (--autoscale's text), or its String.
	Name     string
	Target   string
	Value    float64
	Delay    time.Duration
	Cooldown time.Duration
	Interval time.Duration
	Min, Max int
}

// String is the policy as --autoscale takes it.
func (p Policy) String() string {
	if p.Target == targetStatic {
		return fmt.Sprintf("static %d", p.Min)
	}
	return fmt.Sprintf("%s=%s,delay=%s,cooldown=%s,interval=%s,min=%d,max=%d", p.Target, strconv.FormatFloat(p.Value, 'f', -1, 64),
		results.ShortDuration(p.Delay), results.ShortDuration(p.Cooldown), results.ShortDuration(p.Interval), p.Min, p.Max)
}

// StaticPolicy is a fixed fleet of n replicas.
func StaticPolicy(n int) Policy {
	return Policy{Name: fmt.Sprintf("static %d", n), Target: targetStatic, Min: n, Max: n, Interval: time.Minute}
}

// ParsePolicy reads a policy: TARGET=VALUE (utilisation=0.8, queue=4,
// slo-margin=0.2 or 20%) then any of delay=, cooldown=, interval=
// (durations), min=, max= (replicas), comma-separated; what it leaves
// out is def's.
func ParsePolicy(s string, def Policy) (Policy, error) {
	p := def
	p.Target, p.Name = "", strings.TrimSpace(s)
	for i, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return Policy{}, fmt.Errorf("autoscale %q: %q is not KEY=VALUE", s, part)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		var err error
		switch k {
		case TargetUtilisation, "utilization", TargetQueue, TargetSLOMargin:
			if i != 0 {
				return Policy{}, fmt.Errorf("autoscale %q: the target (%s) goes first", s, k)
			}
			p.Target = map[string]string{"utilization": TargetUtilisation}[k]
			if p.Target == "" {
				p.Target = k
			}
			p.Value, err = policyValue(k, v)
		case "delay", "cooldown", "interval":
			var d time.Duration
			d, err = time.ParseDuration(v)
			if err == nil && (d < 0 || d > 24*time.Hour) {
				err = fmt.Errorf("%s is outside 0 to 24h", v)
			}
			switch k {
			case "delay":
				p.Delay = d
			case "cooldown":
				p.Cooldown = d
			default:
				if err == nil && (d < time.Second || d%time.Second != 0) {
					err = fmt.Errorf("%s: want whole seconds, at least 1s", v)
				}
				p.Interval = d
			}
		case "min", "max":
			var n int
			n, err = strconv.Atoi(v)
			if err == nil && (n < 0 || n > 1024) {
				err = fmt.Errorf("%d is outside 0 to 1024", n)
			}
			if k == "min" {
				p.Min = n
			} else {
				p.Max = n
			}
		default:
			return Policy{}, fmt.Errorf("autoscale %q: unknown key %q (a target — utilisation, queue or slo-margin — then delay, cooldown, interval, min, max)", s, k)
		}
		if err != nil {
			return Policy{}, fmt.Errorf("autoscale %q: %s: %v", s, k, err)
		}
	}
	switch {
	case p.Target == "":
		return Policy{}, fmt.Errorf("autoscale %q: give a target first: utilisation=SHARE, queue=REQUESTS or slo-margin=SHARE", s)
	case p.Max < max(p.Min, 1):
		return Policy{}, fmt.Errorf("autoscale %q: max %d is below min %d (or 1)", s, p.Max, p.Min)
	case p.Interval < time.Second:
		p.Interval = 15 * time.Second
	}
	return p, nil
}

// policyValue reads a target's value.
func policyValue(target, v string) (float64, error) {
	pct := strings.HasSuffix(v, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a number", v)
	}
	if pct {
		f /= 100
	}
	switch target {
	case TargetQueue:
		if pct || f <= 0 || f > 1e6 {
			return 0, fmt.Errorf("%q: want requests waiting per replica, above 0", v)
		}
	case TargetSLOMargin:
		if f < 0 || f >= 1 {
			return 0, fmt.Errorf("%q: want the share of the bound kept spare, 0 to under 1 (0.2 or 20%%)", v)
		}
	default:
		if f <= 0 || f > 1 {
			return 0, fmt.Errorf("%q: want the share of a replica's capacity to load it to, above 0 and at most 1 (0.8 or 80%%)", v)
		}
	}
	return f, nil
}

// ReplicaCurve is one replica's predicted behaviour by its load: the day
// is judged on it. Capacity is the largest load it meets the SLO at,
// Saturation the most it completes per second; Points, by load, its
// queue and its binding bound's slack.
type ReplicaCurve struct {
	Capacity   float64
	Saturation float64
	Points     []CurvePoint
}

// CurvePoint is one replica at a load: requests waiting on average and
// the share of its binding SLO bound left.
type CurvePoint struct {
	Load, Waiting, Slack float64
}

// waiting is the queue per replica at load x, interpolated between
// points (unbounded at or past saturation).
func (c ReplicaCurve) waiting(x float64) float64 {
	if x >= c.Saturation {
		return math.Inf(1)
	}
	return c.interpolate(x, func(p CurvePoint) float64 { return p.Waiting })
}

// interpolate is a point's figure at x, linear between the points around
// it, the nearest one's outside them.
func (c ReplicaCurve) interpolate(x float64, f func(CurvePoint) float64) float64 {
	pts := c.Points
	if len(pts) == 0 {
		return 0
	}
	if x <= pts[0].Load {
		return f(pts[0])
	}
	for i := 1; i < len(pts); i++ {
		if x <= pts[i].Load {
			a, b := pts[i-1], pts[i]
			return f(a) + (f(b)-f(a))*(x-a.Load)/(b.Load-a.Load)
		}
	}
	return f(pts[len(pts)-1])
}

// loadAtSlack is the largest load, up to Capacity, at which the binding
// bound keeps at least margin of itself spare (0 when none does).
func (c ReplicaCurve) loadAtSlack(margin float64) float64 {
	best := 0.0
	for i, p := range c.Points {
		if p.Load > c.Capacity {
			break
		}
		if p.Slack >= margin {
			best = p.Load
			continue
		}
		if i > 0 && c.Points[i-1].Slack >= margin {
			a := c.Points[i-1]
			best = a.Load + (p.Load-a.Load)*(a.Slack-margin)/(a.Slack-p.Slack)
		}
		break
	}
	return math.Min(best, c.Capacity)
}

// desired is the replicas a policy asks for at an observed rate, with
// backlog requests queued across the fleet: the fewest that keep its
// target (the point an HPA's proportional rule settles on), within its
// bounds.
func (p Policy) desired(c ReplicaCurve, rate, backlog float64) int {
	clamp := func(n int) int { return min(max(n, p.Min, 1), p.Max) }
	perReplica := 0.0
	switch p.Target {
	case targetStatic:
		return p.Min
	case TargetUtilisation:
		perReplica = p.Value * c.Capacity
	case TargetSLOMargin:
		perReplica = c.loadAtSlack(p.Value)
	case TargetQueue:
		for n := max(p.Min, 1); n <= p.Max; n++ {
			if backlog/float64(n)+c.waiting(rate/float64(n)) <= p.Value {
				return n
			}
		}
		return p.Max
	}
	if perReplica <= 0 {
		return p.Max
	}
	return clamp(int(math.Ceil(rate/perReplica - 1e-9)))
}

// Load time of a replica, a scale-up's default delay: the engine's start
// (CUDA graphs captured, kernels compiled) and the weights read at
// weightsReadBytesPerS, a container image already on the node.
const (
	engineStart          = time.Minute
	weightsReadBytesPerS = 2e9
)

// LoadTime is how long a new replica of the target takes to serve: the
// default delay of a policy's scale-up.
func (t Target) LoadTime() (time.Duration, error) {
	cfg, _, err := t.Config()
	if err != nil {
		return 0, err
	}
	read := (cfg.Costs.DenseBytes + cfg.Costs.ExpertBytes) / weightsReadBytesPerS
	return engineStart + time.Duration(read*float64(time.Second)).Round(time.Second), nil
}
