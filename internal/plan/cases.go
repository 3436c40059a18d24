package plan

import (
	"fmt"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/suite"
)

// Placer is what cases are checked against: which placements a network
// has and allows.
type Placer interface {
	Allows(network string, p ground.Placement) (bool, string)
	Placements(network string) ([]ground.Placement, error)
}

// LabPlacer answers for the lab's network modes (package netmode).
type LabPlacer struct{}

// Allows implements Placer.
func (LabPlacer) Allows(n string, p ground.Placement) (bool, string) {
	m, err := netmode.Get(n)
	if err != nil {
		return false, err.Error()
	}
	return netmode.Allows(m, p)
}

// Placements implements Placer.
func (LabPlacer) Placements(n string) ([]ground.Placement, error) {
	m, err := netmode.Get(n)
	if err != nil {
		return nil, err
	}
	return m.Placements(), nil
}

// Cases turns networks and placements into cases on be (the default
// suite's networks when none is named; each network's natural placement,
// or each backend's, when none is named); baseline rows are added for
// every placement so that each figure has its ratio, unless noBaseline.
func Cases(be Placer, networks, placements []string, noBaseline bool) ([]Case, error) {
	if len(networks) == 0 {
		networks = suite.DefaultNetworks
	}
	var pls []ground.Placement
	for _, s := range placements {
		p, err := ground.ParsePlacement(s)
		if err != nil {
			return nil, err
		}
		pls = append(pls, p)
	}
	var cases []Case
	seen := map[Case]bool{}
	add := func(c Case) {
		if !seen[c] {
			seen[c] = true
			cases = append(cases, c)
		}
	}
	explicit := len(pls) > 0
	for _, n := range networks {
		natural, err := be.Placements(n)
		if err != nil {
			return nil, err
		}
		want := pls
		if !explicit {
			want = natural[:1]
			if nb, ok := be.(interface {
				Natural(string) []ground.Placement
			}); ok {
				want = nb.Natural(n)
			}
		}
		for _, p := range want {
			if ok, why := be.Allows(n, p); !ok {
				if explicit && len(networks) > 1 && len(pls) > 1 {
					continue // several placements asked: run the ones it can
				}
				return nil, fmt.Errorf("%s cannot run %s: %s", n, p, why)
			}
			add(Case{Network: n, Placement: p})
		}
	}
	if !noBaseline {
		var withBase []Case
		bseen := map[ground.Placement]bool{}
		for _, c := range cases {
			if c.Network == result.BaselineNetwork {
				bseen[c.Placement] = true
			}
		}
		for _, c := range cases {
			if !bseen[c.Placement] && c.Placement != ground.SamePod {
				bseen[c.Placement] = true
				withBase = append(withBase, Case{Network: result.BaselineNetwork, Placement: c.Placement})
			}
			withBase = append(withBase, c)
		}
		cases = withBase
	}
	return cases, nil
}
