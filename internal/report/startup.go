package report

import (
	"fmt"

	"github.com/cnperf/cnperf/internal/result"
)

// startupColumns are the startup workload's figures: mean create-to-first-
// reply time (with its ratio to the baseline) and its p95, in milliseconds.
func startupColumns(workload string) []column {
	get := func(key string) func(result.Metrics) (float64, bool) {
		return func(m result.Metrics) (float64, bool) {
			v, ok := m.StartupMs[key]
			return v, ok
		}
	}
	ms := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	return []column{
		{workload, "startup ms", get("mean"), ms, true},
		{workload, "p95 ms", get("p95"), ms, false},
	}
}
