package section

import (
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

// Summaries are the run's summaries, computed (medians and, from 2
// rounds on, intervals) for a file written without them.
func Summaries(run *result.Run) []result.Summary {
	if len(run.Summaries) > 0 {
		return run.Summaries
	}
	cp := *run
	cp.Warnings = nil
	stats.Summarize(&cp, workload.FiguresOf)
	return cp.Summaries
}

// FigureOf finds the figure with key that workload wl declares.
func FigureOf(wl, key string) (result.Figure, bool) {
	for _, f := range workload.FiguresOf(wl) {
		if f.Key == key {
			return f, true
		}
	}
	return result.Figure{}, false
}

// StepWithout drops the fields of a step label that start with prefix.
func StepWithout(step, prefix string) string {
	var out []string
	for _, f := range strings.Fields(step) {
		if !strings.HasPrefix(f, prefix) {
			out = append(out, f)
		}
	}
	return strings.Join(out, " ")
}
