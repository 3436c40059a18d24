package docker

import (
	"context"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/ground"
)

func TestPlacements(t *testing.T) {
	b := New("unix:///nonexistent", "", "t", 0, nil)
	for _, tc := range []struct {
		network string
		p       ground.Placement
		ok      bool
	}{
		{"bridge", ground.SameHost, true},
		{"bridge", ground.CrossHost, false},
		{"nat", ground.SameHost, true},
		{"host", ground.SameHost, true},
		{"container", ground.SamePod, true},
		{"none", ground.SamePod, true},
		{"none", ground.SameHost, false},
		{"vxlan", ground.CrossHost, false},
	} {
		ok, why := b.Allows(tc.network, tc.p)
		if ok != tc.ok || (!ok && why == "") {
			t.Errorf("Allows(%s, %s) = %v %q, want %v (with a reason when not)", tc.network, tc.p, ok, why, tc.ok)
		}
	}
	if err := b.Check("vxlan"); err == nil || !strings.Contains(err.Error(), "bridge") {
		t.Errorf("Check(vxlan) = %v, want the list of networks", err)
	}
	if err := b.Check("bridge"); err == nil || !strings.Contains(err.Error(), "no Docker engine reachable") {
		t.Errorf("Check with no engine = %v", err)
	}
	// macvlan is refused before any engine is contacted (this one has
	// none), in one line that names docker-lab
	for _, f := range []func() error{
		func() error { return b.Check("macvlan") },
		func() error { _, err := b.Placements("macvlan"); return err },
		func() error {
			_, err := b.Deploy(context.Background(), backend.Topology{Network: "macvlan"})
			return err
		},
	} {
		err := f()
		if err == nil || !strings.Contains(err.Error(), "use --backend docker-lab") || !strings.Contains(err.Error(), "own network namespace") || strings.Contains(err.Error(), "\n") {
			t.Errorf("macvlan on --backend docker: %v, want one line naming --backend docker-lab", err)
		}
	}
	if ok, why := b.Allows("macvlan", ground.SameHost); ok || !strings.Contains(why, "docker-lab") {
		t.Errorf("Allows(macvlan) = %v %q", ok, why)
	}
}
