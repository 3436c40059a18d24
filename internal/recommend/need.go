package recommend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/registry"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

// Need is what ranking a profile needs measured, from its rules: the
// fewest workloads whose declared figures cover every rule, and whether
// the rules read cells through a ClusterIP service.
type Need struct {
	Profile   string
	Workloads []string
	Services  bool
	// Covers says, per chosen workload, which rules' metrics it measures.
	Covers map[string][]string
	// Uncovered are rules no candidate measures (none in this build).
	Uncovered []string
}

// NeedOf chooses what to run for profile among candidates, the workloads
// in the order the caller prefers them (cnperf passes its suites'
// workloads, the main suite's first): greedily, the candidate that
// measures the most rules not yet covered, the earlier one on a tie. A
// workload measures a rule when it declares the rule's metric as a figure
// and the rule's cells select it by how it uses connections; a rule of
// service cells is measured by any workload with the figure, through a
// service (Services), or, with no figure to declare (the time to program
// the services), by the service run itself.
func NeedOf(profile string, candidates []string) (Need, error) {
	var rules []Rule
	for _, r := range Rules {
		if r.Profile == profile {
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 {
		return Need{}, fmt.Errorf("unknown profile %q;%s use one of %s", profile, registry.Suggest(profile, Profiles()), strings.Join(Profiles(), ", "))
	}
	n := Need{Profile: profile, Covers: map[string][]string{}}
	covers := func(wl string, r Rule) bool {
		declared := slices.ContainsFunc(workload.FiguresOf(wl), func(f result.Figure) bool { return f.Key == r.Metric })
		if r.Cells == Services {
			return declared
		}
		return declared && selects(r.Cells, result.CellKey{}, workload.ConnectionsOf(wl, nil))
	}
	left := slices.Clone(rules)
	for _, r := range rules {
		if r.Cells == Services {
			n.Services = true
			if r.Better != "" { // a figure of the service run, not of a workload
				left = slices.DeleteFunc(left, func(x Rule) bool { return x == r })
			}
		}
	}
	for len(left) > 0 {
		best, bestN := "", 0
		for _, wl := range candidates {
			c := 0
			for _, r := range left {
				if covers(wl, r) {
					c++
				}
			}
			if c > bestN {
				best, bestN = wl, c
			}
		}
		if best == "" {
			for _, r := range left {
				n.Uncovered = append(n.Uncovered, r.Metric+" of "+string(r.Cells))
			}
			break
		}
		n.Workloads = append(n.Workloads, best)
		left = slices.DeleteFunc(left, func(r Rule) bool {
			if covers(best, r) {
				n.Covers[best] = append(n.Covers[best], r.Metric+" of "+string(r.Cells))
				return true
			}
			return false
		})
	}
	return n, nil
}

// Excluded says why the constraints remove network before anything is
// measured ("" when they do not), as Rank would remove its cells.
func Excluded(network string, cons []Constraint) string {
	_, why := applyConstraints(&result.Run{}, Candidate{Network: network}, cons)
	return why
}
