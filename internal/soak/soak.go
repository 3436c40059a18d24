// Package soak holds the soak test: one lab measured round after round for
// a long time while the agents' memory, open descriptors and goroutines
// are sampled; they must stay flat (a leak per measurement grows them
// without bound over a long suite). Flat is the check, here so it is tested.
package soak

import (
	"fmt"

	"github.com/cnperf/cnperf/internal/stats"
)

// Bound is how much a series may grow: the last third's median may exceed
// the first third's by at most Abs plus Rel times the first.
type Bound struct {
	Abs, Rel float64
}

// Flat checks that samples (in time order, at least 6) did not grow beyond
// b from their first third to their last third. The error names the growth.
func Flat(name string, samples []float64, b Bound) error {
	if len(samples) < 6 {
		return fmt.Errorf("%s: %d samples, want at least 6 to compare thirds", name, len(samples))
	}
	third := len(samples) / 3
	first := stats.Median(samples[:third])
	last := stats.Median(samples[len(samples)-third:])
	if limit := first + b.Abs + b.Rel*first; last > limit {
		return fmt.Errorf("%s grew: median %.0f in the first third, %.0f in the last (limit %.0f)", name, first, last, limit)
	}
	return nil
}
