// Package hist wraps HDR histograms for latency recording: one histogram per
// worker, merged exactly at the end, exchanged between agents in the standard
// compressed HdrHistogram encoding so that merging across processes is exact.
package hist

import (
	"fmt"
	"io"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Lowest and highest trackable latencies, in nanoseconds, and the precision.
// 1 ns .. 100 s at 3 significant digits keeps every percentile within 0.1%.
const (
	lowest  = 1
	highest = int64(100 * time.Second)
	sigfig  = 3
)

// H is a latency histogram recording nanoseconds.
type H struct{ h *hdr.Histogram }

// New returns an empty latency histogram.
func New() *H { return &H{h: hdr.New(lowest, highest, sigfig)} }

// Record adds one latency. Values outside the trackable range are clamped so
// that no sample is ever dropped silently.
func (x *H) Record(d time.Duration) {
	v := int64(d)
	if v < lowest {
		v = lowest
	} else if v > highest {
		v = highest
	}
	_ = x.h.RecordValue(v)
}

// RecordN adds n samples of one latency (used by coordinated-omission correction).
func (x *H) RecordN(d time.Duration, n int64) {
	v := int64(d)
	if v < lowest {
		v = lowest
	} else if v > highest {
		v = highest
	}
	_ = x.h.RecordValues(v, n)
}

// Merge adds every sample of o into x. It is exact: both use the same layout.
func (x *H) Merge(o *H) {
	if o == nil {
		return
	}
	x.h.Merge(o.h)
}

// Count is the number of samples.
func (x *H) Count() int64 { return x.h.TotalCount() }

// Quantile returns the latency at percentile q (0..100).
func (x *H) Quantile(q float64) time.Duration { return time.Duration(x.h.ValueAtQuantile(q)) }

// Max returns the largest recorded latency (at histogram precision).
func (x *H) Max() time.Duration { return time.Duration(x.h.Max()) }

// Min returns the smallest recorded latency.
func (x *H) Min() time.Duration { return time.Duration(x.h.Min()) }

// Mean returns the mean latency.
func (x *H) Mean() time.Duration { return time.Duration(x.h.Mean()) }

// Reset empties the histogram, keeping its memory.
func (x *H) Reset() { x.h.Reset() }

// Encode returns the standard compressed, base64 HdrHistogram V2 encoding,
// readable by every HdrHistogram implementation.
func (x *H) Encode() (string, error) {
	b, err := x.h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encoding histogram: %w", err)
	}
	return string(b), nil
}

// Decode parses an encoding made by Encode.
func Decode(s string) (*H, error) {
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decoding histogram: %w", err)
	}
	return &H{h: h}, nil
}

// Percentiles are the standard latency percentiles cnperf reports for rr
// workloads, keyed the way the JSON schema names them.
var Percentiles = []struct {
	Key string
	Q   float64
}{
	{"p50", 50}, {"p90", 90}, {"p99", 99}, {"p99.9", 99.9},
}

// Summary returns the percentiles in microseconds plus max, keyed as in the schema.
func (x *H) Summary(ps []struct {
	Key string
	Q   float64
}) map[string]float64 {
	m := make(map[string]float64, len(ps)+1)
	for _, p := range ps {
		m[p.Key] = us(x.Quantile(p.Q))
	}
	m["max"] = us(x.Max())
	return m
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

// TailPercentiles are the open-loop latency percentiles, as the seed-000
// study tabulates them, down to p99.999.
var TailPercentiles = []struct {
	Key string
	Q   float64
}{
	{"p50", 50}, {"p95", 95}, {"p99", 99}, {"p99.5", 99.5}, {"p99.9", 99.9},
	{"p99.99", 99.99}, {"p99.999", 99.999},
}

// Significant reports whether percentile q (0..100) is backed by the
// samples taken: q needs at least 1/(1-q) samples, so that at least one
// sample lies at or beyond it (p99.999 needs 100,000). Max is always backed.
func (x *H) Significant(q float64) bool {
	if q >= 100 {
		return x.Count() > 0
	}
	need := 100 / (100 - q)
	return float64(x.Count()) >= need-1e-9
}

// WriteHgrm writes the percentile distribution in HdrHistogram's standard
// .hgrm text (as HistogramLogProcessor and the HdrHistogram plotter read
// it), values in microseconds.
func (x *H) WriteHgrm(w io.Writer) error {
	_, err := x.h.PercentilesPrint(w, 5, 1e3)
	return err
}

// Clone returns an independent copy of x.
func (x *H) Clone() *H {
	c := New()
	c.h.Merge(x.h)
	return c
}
