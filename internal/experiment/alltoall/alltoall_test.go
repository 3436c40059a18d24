package alltoall

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	_ "github.com/cnperf/cnperf/internal/workload/all"
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
	cases := []experiment.Case{{Network: "host-gw", Placement: backend.SameHost}, {Network: "host-gw", Placement: backend.CrossHost}}
	for _, tc := range []struct {
		pods    []int
		spreads []string
		want    string
	}{
		{[]int{1}, nil, "--pods 1"},
		{[]int{2, 65}, nil, "--pods 65"},
		{nil, []string{"diagonal"}, "--spread \"diagonal\""},
	} {
		p := &experiment.Plan{Cases: cases, Workloads: []string{"alltoall"}, Options: opts(tc.pods, tc.spreads)}
		if err := (AllToAll{}).Validate(p, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: %v, want %q", tc.pods, tc.spreads, err, tc.want)
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
