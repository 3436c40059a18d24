package suite_test

import (
	"testing"

	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/workload"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func TestSeedLatencyPreset(t *testing.T) {
	s, err := suite.Get("seed-latency")
	if err != nil {
		t.Fatal(err)
	}
	nets := map[string]bool{}
	for _, c := range s.Cases {
		nets[c.Network] = true
		if c.Placement != "cross-host" {
			t.Errorf("%s runs %s; the study measured across hosts", c.Network, c.Placement)
		}
	}
	for _, n := range []string{"host", "host-gw", "vxlan", "macvlan"} {
		if !nets[n] {
			t.Errorf("preset lacks %s (it has %v)", n, nets)
		}
	}
	w, err := workload.Get(s.Workloads[0])
	if err != nil {
		t.Fatal(err)
	}
	// the workload's options, as plan.Build moves them from the suite's
	p := s.Params
	p.Extra = map[string]string{}
	for _, f := range workload.Flags() {
		if v, ok := s.Options[f.Name]; ok {
			p.Extra[f.Name] = v
		}
	}
	w.Defaults(&p)
	if err := w.Validate(p); err != nil {
		t.Skipf("preset does not validate here: %v", err) // nginx missing
	}
	st := w.(workload.Stepper)
	p1, label, ok := st.Next(p, nil)
	if !ok || p1.Extra["phase"] != "search" || p1.Extra["response-size"] != "350" {
		t.Fatalf("first step %q %v: want a search at 350 B", label, p1.Extra)
	}
}
