package serverview

import (
	"bytes"
	"math"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape is one parsed Prometheus exposition.
type scrape map[string]*dto.MetricFamily

// parseExposition parses the text format with Prometheus's own parser.
func parseExposition(b []byte) (scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return scrape(fams), nil
}

// selector picks a view's series: its model's (series without a model
// label belong to every model) and, for one pool of a disaggregated
// deployment read from one page, that pool's (its role label).
type selector struct {
	model, role string
	// stage, when set, picks one stage of a family of several (SGLang's
	// per_stage_req_latency_seconds).
	stage string
}

// matches reports whether a series is one sel picks.
func matches(m *dto.Metric, sel selector) bool {
	for _, l := range m.Label {
		switch l.GetName() {
		case "model_name", "model":
			if sel.model != "" && l.GetValue() != sel.model {
				return false
			}
		case "role":
			if sel.role != "" && l.GetValue() != sel.role {
				return false
			}
		case "stage":
			if sel.stage != "" && l.GetValue() != sel.stage {
				return false
			}
		}
	}
	return true
}

// first returns the first family present among names.
func (s scrape) first(names ...string) (*dto.MetricFamily, string) {
	for _, n := range names {
		if f, ok := s[n]; ok {
			return f, n
		}
	}
	return nil, ""
}

// sum adds a counter's or gauge's series of the model.
func (s scrape) sum(sel selector, names ...string) (float64, bool) {
	f, _ := s.first(names...)
	if f == nil {
		return 0, false
	}
	total := 0.0
	for _, m := range f.Metric {
		if !matches(m, sel) {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Untyped != nil:
			total += m.Untyped.GetValue()
		}
	}
	return total, true
}

// bucketCounts is a histogram's cumulative counts by upper bound.
type bucketCounts struct {
	bounds []float64
	counts []float64
	count  float64
	sum    float64
}

func (s scrape) histogram(sel selector, names ...string) (bucketCounts, bool) {
	f, _ := s.first(names...)
	if f == nil {
		return bucketCounts{}, false
	}
	acc := map[float64]float64{}
	var count, sum float64
	for _, m := range f.Metric {
		if m.Histogram == nil || !matches(m, sel) {
			continue
		}
		for _, b := range m.Histogram.Bucket {
			acc[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
		count += float64(m.Histogram.GetSampleCount())
		sum += m.Histogram.GetSampleSum()
	}
	out := bucketCounts{count: count, sum: sum}
	for b := range acc {
		out.bounds = append(out.bounds, b)
	}
	sort.Float64s(out.bounds)
	for _, b := range out.bounds {
		out.counts = append(out.counts, acc[b])
	}
	if len(out.bounds) == 0 || !math.IsInf(out.bounds[len(out.bounds)-1], 1) {
		out.bounds = append(out.bounds, math.Inf(1))
		out.counts = append(out.counts, count)
	}
	return out, true
}

// delta is after − before. A counter that went down was reset between the
// scrapes: then the after values alone are the window's (reset reports it).
func (after bucketCounts) delta(before bucketCounts) (d bucketCounts, reset bool) {
	prev := map[float64]float64{}
	for i, b := range before.bounds {
		prev[b] = before.counts[i]
	}
	d = bucketCounts{bounds: after.bounds, counts: make([]float64, len(after.counts)), count: after.count - before.count, sum: after.sum - before.sum}
	for i, b := range after.bounds {
		d.counts[i] = after.counts[i] - prev[b]
		if d.counts[i] < 0 {
			reset = true
		}
	}
	if d.count < 0 || reset {
		return after, true
	}
	return d, false
}

// quantile interpolates linearly within the bucket holding rank q·count,
// as Prometheus's histogram_quantile does. A rank in the +Inf bucket
// returns the highest finite bound. ok is false for an empty histogram.
func (h bucketCounts) quantile(q float64) (float64, bool) {
	if len(h.counts) == 0 {
		return 0, false
	}
	total := h.counts[len(h.counts)-1]
	if total <= 0 {
		return 0, false
	}
	rank := q * total
	lower, prevCount := 0.0, 0.0
	for i, b := range h.bounds {
		c := h.counts[i]
		if c >= rank {
			if math.IsInf(b, 1) {
				return lower, true
			}
			if c == prevCount {
				return b, true
			}
			return lower + (b-lower)*(rank-prevCount)/(c-prevCount), true
		}
		lower, prevCount = b, c
	}
	return lower, true
}

// mean is the exact mean of the window's observations, from the
// histogram's _sum and _count; ok is false when it holds none.
func (h bucketCounts) mean() (float64, bool) {
	if h.count <= 0 {
		return 0, false
	}
	return h.sum / h.count, true
}

// bucketOf returns the bucket (lo, hi] that holds rank q·count, the same
// bucket quantile interpolates in: all a histogram can say of a
// percentile. hi is +Inf for the overflow bucket.
func (h bucketCounts) bucketOf(q float64) (lo, hi float64, ok bool) {
	if len(h.counts) == 0 || h.counts[len(h.counts)-1] <= 0 {
		return 0, 0, false
	}
	rank := q * h.counts[len(h.counts)-1]
	for i, b := range h.bounds {
		if h.counts[i] >= rank {
			return lo, b, true
		}
		lo = b
	}
	return lo, math.Inf(1), true
}
