package alltoall

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/ground"
	_ "github.com/cnperf/cnperf/internal/workload/all"
	a2a "github.com/cnperf/cnperf/internal/workload/alltoall"
)

func TestLayout(t *testing.T) {
	for _, tc := range []struct {
		spread string
		n      int
		want   string
	}{
		{oneHost, 3, "a1-1,a1-2,a1-3"},
		{OneToRest, 4, "a1-1,a2-1,a2-2,a2-3"},
		{Balanced, 5, "a1-1,a1-2,a1-3,a2-1,a2-2"},
		{Balanced, 2, "a1-1,a2-1"},
	} {
		if got := strings.Join(Layout(tc.spread, tc.n), ","); got != tc.want {
			t.Errorf("%s %d: %s, want %s", tc.spread, tc.n, got, tc.want)
		}
	}
}

func TestValidateUnits(t *testing.T) {
	cases := []experiment.Case{{Network: "host-gw", Placement: ground.SameHost}, {Network: "host-gw", Placement: ground.CrossHost}}
	// the local lab (nil backend: the default) takes 1,000 pods, a backend
	// of an agent per pod 64
	docker := agentBackend{"docker"}
	want1000 := "" // 1,000 pods need an open-file hard limit of 1,000,256
	if a2a.CheckFDLimit(1000) != nil {
		want1000 = "--pods 1000: not enough file descriptors"
	}
	for _, tc := range []struct {
		be      backend.Backend
		pods    []int
		spreads []string
		want    string // "" accepts
	}{
		{nil, []int{1}, nil, "--pods 1"},
		{nil, []int{2, 1000}, nil, want1000},
		{nil, []int{2, 1001}, nil, "--pods 1001: all-to-all needs 2 to 1000 pods"},
		{docker, []int{2, 64}, nil, ""},
		{docker, []int{2, 65}, nil, "--pods 65: all-to-all needs 2 to 64 pods"},
		{nil, nil, []string{"diagonal"}, "--spread \"diagonal\""},
	} {
		p := &experiment.Plan{Cases: cases, Workloads: []string{"alltoall"}, Options: opts(tc.pods, tc.spreads), Backend: tc.be}
		err := (AllToAll{}).Validate(p, nil)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v %v: %v, want %q", tc.pods, tc.spreads, err, tc.want)
		}
		if err != nil {
			continue
		}
		units, err := (AllToAll{}).Units(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, ps := range units[0].Topology.Pods {
			if ps.NoAgent != (tc.be == nil) {
				t.Fatalf("%v: pod %s NoAgent %v", tc.be, ps.Name, ps.NoAgent)
			}
		}
	}
	p := &experiment.Plan{Cases: cases, Workloads: []string{"tcp_rr", "alltoall"}, Options: map[string]string{"pods": "2,8"}}
	if got := (AllToAll{}).Claim(p); len(got) != 1 || got[0] != "alltoall" {
		t.Fatalf("claimed %v", got)
	}
	if err := (AllToAll{}).Validate(p, nil); err != nil {
		t.Fatal(err)
	}
	units, err := (AllToAll{}).Units(p, nil)
	if err != nil || len(units) != 1 {
		t.Fatalf("%v %v", units, err)
	}
	u := units[0]
	// one host: 8 pods; 1:N-1 needs 7 on host 2, balanced 4 on host 1
	h := map[int]int{}
	for _, ps := range u.Topology.Pods {
		h[ps.Host]++
	}
	if h[1] != 8 || h[2] != 7 || u.Topology.Hosts != 2 {
		t.Errorf("pods per host %v, hosts %d", h, u.Topology.Hosts)
	}
	var names []string
	for _, c := range u.Cells {
		names = append(names, c.Name)
	}
	want := "same-host alltoall pods=2,same-host alltoall pods=8,cross-host alltoall pods=2 spread=1:N-1,cross-host alltoall pods=8 spread=1:N-1,cross-host alltoall pods=2 spread=balanced,cross-host alltoall pods=8 spread=balanced"
	if strings.Join(names, ",") != want {
		t.Errorf("cells %v", names)
	}
}

// agentBackend is a backend whose pods are agent processes.
type agentBackend struct{ name string }

func (b agentBackend) Name() string                                 { return b.name }
func (agentBackend) Check(string) error                             { return nil }
func (agentBackend) Allows(string, ground.Placement) (bool, string) { return true, "" }
func (agentBackend) Placements(string) ([]ground.Placement, error)  { return nil, nil }
func (agentBackend) Deploy(context.Context, backend.Topology) (backend.Deployment, error) {
	return nil, nil
}

// opts are the experiment's options as flags give them.
func opts(pods []int, spreads []string) map[string]string {
	o := map[string]string{}
	var ps []string
	for _, n := range pods {
		ps = append(ps, strconv.Itoa(n))
	}
	if len(ps) > 0 {
		o[Pods.Name] = strings.Join(ps, ",")
	}
	if len(spreads) > 0 {
		o[Spread.Name] = strings.Join(spreads, ",")
	}
	return o
}
