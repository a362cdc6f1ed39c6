package results

import (
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// SummarizeHistogram turns a histogram into a Summary, dividing values by
// scale (1000 turns microseconds into milliseconds). hdrhistogram's
// ValueAtPercentile takes a percentile (0–100), not a fraction.
func SummarizeHistogram(h *hdrhistogram.Histogram, scale float64) Summary {
	if h.TotalCount() == 0 {
		return Summary{}
	}
	q := func(p float64) float64 { return float64(h.ValueAtPercentile(p)) / scale }
	return Summary{
		Count:  h.TotalCount(),
		Mean:   h.Mean() / scale,
		Stddev: h.StdDev() / scale,
		Min:    float64(h.Min()) / scale,
		P50:    q(50),
		P90:    q(90),
		P95:    q(95),
		P99:    q(99),
		Max:    float64(h.Max()) / scale,
	}
}

// SummarizeCounts summarises a histogram of whole counts (tokens per
// request). Each of its buckets is read as its lowest value, not its
// middle or top as SummarizeHistogram reads times: counts below 2,048
// have buckets of one and are exact, and a run whose every prompt was
// 2,048 tokens says 2,048, not 2,049 (the top of its bucket of two).
// Above 2,048 a figure is within 0.1%, one or two tokens low at most.
func SummarizeCounts(h *hdrhistogram.Histogram) Summary {
	if h.TotalCount() == 0 {
		return Summary{}
	}
	n := float64(h.TotalCount())
	var sum, sq float64
	var top int64
	bars := h.Distribution()
	for _, b := range bars {
		sum += float64(b.From) * float64(b.Count)
		if b.Count > 0 {
			top = b.From
		}
	}
	mean := sum / n
	for _, b := range bars {
		d := float64(b.From) - mean
		sq += d * d * float64(b.Count)
	}
	at := func(p float64) float64 {
		// The smallest value with at least p% of the counts at or below it.
		want := int64(math.Ceil(p / 100 * n))
		var seen int64
		for _, b := range bars {
			if seen += b.Count; seen >= max(want, 1) {
				return float64(b.From)
			}
		}
		return float64(top)
	}
	return Summary{
		Count: h.TotalCount(), Mean: mean, Stddev: math.Sqrt(sq / n),
		Min: float64(h.Min()), P50: at(50), P90: at(90), P95: at(95), P99: at(99),
		Max: float64(top),
	}
}

// EncodeHistogram is the V2 compressed, base64 form kept in Histograms.
func EncodeHistogram(h *hdrhistogram.Histogram) string {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return ""
	}
	return string(b)
}

// DecodeHistogram reads one of Histograms' values.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("a damaged histogram: %v", err)
	}
	return h, nil
}
