package load

import (
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

// Ladder is the share of the searched maximum rate each step of the
// study's tables runs at.
var Ladder = []struct {
	Name  string
	Share float64
}{{"20%", 0.2}, {"60%", 0.6}, {"100%", 1.0}}

// Next implements workload.Stepper.
func (w HTTPRate) Next(base workload.Params, done []workload.StepResult) (workload.Params, string, bool) {
	return nextOpen(base, done)
}

// Next implements workload.Stepper.
func (w TCPRate) Next(base workload.Params, done []workload.StepResult) (workload.Params, string, bool) {
	return nextOpen(base, done)
}

// Next implements workload.Stepper: one step per response size.
func (w HTTPQPS) Next(base workload.Params, done []workload.StepResult) (workload.Params, string, bool) {
	o, err := parseOpts(base, true)
	if err != nil || len(done) >= len(o.sizes) {
		return base, "", false
	}
	size := o.sizes[len(done)]
	p := step(base, map[string]string{result.ParamResponseSize: strconv.Itoa(size)})
	if len(o.sizes) == 1 {
		return p, "", true
	}
	return p, fmt.Sprintf("size=%d", size), true
}

func step(base workload.Params, set map[string]string) workload.Params {
	p := base
	p.Extra = maps.Clone(base.Extra)
	if p.Extra == nil {
		p.Extra = map[string]string{}
	}
	maps.Copy(p.Extra, set)
	return p
}

// nextOpen plans the open-loop steps: every rate of --rate for every
// response size, or, with --max-rate-search, per size a search for the
// highest rate held (doubling from the first --rate or 1000/s, then
// bisecting to within 10%), followed by the 20/60/100% ladder of it.
// It is a pure function of what was done, so a rerun plans the same steps.
func nextOpen(base workload.Params, done []workload.StepResult) (workload.Params, string, bool) {
	o, err := parseOpts(base, false)
	if err != nil {
		return base, "", false
	}
	sizes := dedupe(o.sizes)
	if !o.search {
		rates := o.rates
		if len(rates) == 0 {
			rates = []uint64{defaultRate}
		}
		k := len(done)
		if k >= len(rates)*len(sizes) {
			return base, "", false
		}
		size, rate := sizes[k/len(rates)], rates[k%len(rates)]
		p := step(base, map[string]string{result.ParamRate: itoa(rate), result.ParamResponseSize: strconv.Itoa(size)})
		if len(rates)*len(sizes) == 1 {
			return p, "", true
		}
		return p, fmt.Sprintf("rate=%d size=%d", rate, size), true
	}
	start := uint64(searchStartRate)
	if len(o.rates) > 0 {
		start = o.rates[0]
	}
	for _, size := range sizes {
		sz := strconv.Itoa(size)
		var search, ladder []workload.StepResult
		for _, d := range done {
			if d.Params.Extra[result.ParamResponseSize] != sz {
				continue
			}
			switch d.Params.Extra[result.ParamPhase] {
			case "search":
				search = append(search, d)
			case "ladder":
				ladder = append(ladder, d)
			}
		}
		best, next, more := searchNext(search, start, o.latencyBound)
		if more {
			p := step(base, map[string]string{result.ParamRate: itoa(next), result.ParamResponseSize: sz, result.ParamPhase: "search"})
			p.Duration = min(base.Duration, searchStepSeconds*time.Second)
			return p, fmt.Sprintf("search size=%d step=%d", size, len(search)+1), true
		}
		if best == 0 || len(ladder) >= len(Ladder) {
			continue // nothing held (the search steps say so), or done
		}
		l := Ladder[len(ladder)]
		rate := max(1, uint64(float64(best)*l.Share+0.5))
		p := step(base, map[string]string{result.ParamRate: itoa(rate), result.ParamResponseSize: sz, result.ParamPhase: "ladder",
			result.ParamLoad: l.Name, result.ParamMaxRate: itoa(best)})
		return p, fmt.Sprintf("load=%s of max size=%d", l.Name, size), true
	}
	return base, "", false
}

// held says whether a search step sustained its rate: measured, not
// saturated, and p99 within the bound.
func held(d workload.StepResult, bound time.Duration) bool {
	if d.Err != nil || d.Metrics.Extra[result.ExtraSaturated] != 0 || d.Metrics.LatencyUs == nil {
		return false
	}
	return d.Metrics.LatencyUs["p99"] <= float64(bound)/1e3
}

// searchNext returns the best rate held so far and the next rate to try,
// with more=false when the search is over. A rate that fails is tried once
// more before it counts as failed: on a shared machine one scheduling
// hiccup can spoil a step, and the search must not halve on noise.
func searchNext(steps []workload.StepResult, start uint64, bound time.Duration) (best, next uint64, more bool) {
	tries := map[uint64]int{}
	oks := map[uint64]int{}
	var last uint64
	for _, d := range steps {
		r, _ := strconv.ParseUint(d.Params.Extra[result.ParamRate], 10, 64)
		last = r
		tries[r]++
		if held(d, bound) {
			oks[r]++
		}
	}
	if len(steps) > 0 && oks[last] == 0 && tries[last] == 1 && len(steps) < searchMaxSteps {
		return 0, last, true // confirm a failure before acting on it
	}
	var lo, hi uint64 // highest held, lowest failed (0: none yet)
	for r, n := range tries {
		switch {
		case oks[r] > 0:
			lo = max(lo, r)
		case n >= 2 && (hi == 0 || r < hi):
			hi = r
		}
	}
	if hi != 0 && lo >= hi { // a lower rate failed twice after a higher one held
		lo = 0
		for r := range oks {
			if r < hi {
				lo = max(lo, r)
			}
		}
	}
	switch {
	case len(steps) == 0:
		return 0, start, true
	case len(steps) >= searchMaxSteps:
		return lo, 0, false
	case hi == 0: // everything held: double
		if last*2 > maxRate {
			return lo, 0, false
		}
		return lo, last * 2, true
	case lo == 0: // nothing held yet: halve
		if hi/2 < 1 {
			return 0, 0, false
		}
		return 0, hi / 2, true
	case float64(hi)/float64(lo) > searchResolution:
		return lo, (lo + hi) / 2, true
	}
	return lo, 0, false
}

func dedupe(xs []int) []int {
	var out []int
	seen := map[int]bool{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
