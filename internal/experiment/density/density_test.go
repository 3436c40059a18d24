package density

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/ground"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func TestUnits(t *testing.T) {
	p := &experiment.Plan{
		Cases:     []experiment.Case{{Network: "host-gw", Placement: ground.CrossHost}},
		Workloads: []string{"tcp_rr", "tcp_crr", "startup"},
		Options:   map[string]string{"density": "250,10", "startup-pods": "3"}, Rounds: 2,
	}
	got := Density{}.Claim(p)
	if strings.Join(got, ",") != "tcp_rr,tcp_crr,startup" {
		t.Fatalf("claimed %v", got)
	}
	if err := (Density{}).Validate(p, got); err != nil {
		t.Fatal(err)
	}
	units, err := Density{}.Units(p, got)
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 2 {
		t.Fatalf("%d units, want one per count", len(units))
	}
	for i, want := range []int{10, 250} { // smallest first
		u := units[i]
		if u.Topology.IdlePods != want || u.Topology.PodsPerHost < want+3*2 {
			t.Errorf("unit %d: idle %d, room for %d pods a host; want %d idle and room for the start-up pods", i, u.Topology.IdlePods, u.Topology.PodsPerHost, want)
		}
		if len(u.Cells) != 3 {
			t.Errorf("unit %d: %d cells, want tcp_rr, tcp_crr and startup", i, len(u.Cells))
		}
		for _, c := range u.Cells {
			if !strings.HasSuffix(c.Name, Step(want)) {
				t.Errorf("cell %q is not labelled %s", c.Name, Step(want))
			}
		}
	}
	if (Density{}).Claim(&experiment.Plan{Workloads: []string{"tcp_rr"}}) != nil {
		t.Error("claimed a plan without densities")
	}
	if err := (Density{}).Validate(&experiment.Plan{Options: map[string]string{"density": "2000"}}, nil); err == nil {
		t.Error("accepted 2000 idle pods a host")
	}
	if Of("density=110 size=16") != 110 || Of("size=16") != 0 {
		t.Error("Of does not read the count")
	}
}
