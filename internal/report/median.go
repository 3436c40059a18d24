package report

import kit "github.com/cnperf/cnperf/internal/section"

// median is the kit's Median.
func median(xs []float64) float64 { return kit.Median(xs) }
