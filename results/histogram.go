package results

import (
	"fmt"

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
