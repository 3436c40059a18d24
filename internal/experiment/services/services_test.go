package services

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/workload"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func TestValidateServices(t *testing.T) {
	cases := []struct {
		name     string
		lbs      []string
		services []int
		wls      []string
		want     string
	}{
		{"none", nil, nil, []string{"tcp_rr"}, ""},
		{"all", []string{"none", "iptables", "nftables", "ipvs", "ebpf-socket", "ebpf-tc"}, []int{1, 10000}, []string{"tcp_crr"}, ""},
		{"unknown", []string{"kube-router"}, nil, []string{"tcp_crr"}, "unknown load balancer"},
		{"twice", []string{"iptables", "iptables"}, nil, []string{"tcp_crr"}, "twice"},
		{"services without lb", nil, []int{100}, []string{"tcp_crr"}, "needs --lb"},
		{"zero services", []string{"iptables"}, []int{0}, []string{"tcp_crr"}, "--services 0"},
		{"too many", []string{"iptables"}, []int{MaxServices + 1}, []string{"tcp_crr"}, "--services"},
		{"udp", []string{"iptables"}, nil, []string{"udp_rr", "tcp_rr"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &experiment.Plan{LBs: c.lbs, Services: c.services, Workloads: c.wls, Params: workload.Params{Duration: time.Second}}
			err := ValidatePlan(p)
			if err == nil && len(c.lbs) > 0 {
				err = Services{}.Validate(p, c.wls)
			}
			if c.want == "" && err != nil {
				t.Fatalf("unexpected: %v", err)
			}
			if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	r := func(lb string, n int, wl, ka string, tps float64) result.Result {
		p := map[string]any{}
		if ka != "" {
			p["keepalive"] = ka
		}
		return result.Result{Network: "host-gw", LB: lb, Services: n, Workload: wl, Params: p, Metrics: result.Metrics{TransactionsPerS: result.F(tps)}}
	}
	rs := []result.Result{
		r("none", 0, "tcp_crr", "", 1200),
		r("iptables", 1, "tcp_crr", "", 1000),
		r("iptables", 100, "tcp_crr", "", 800),
		r("ipvs", 1, "tcp_crr", "", 500),
		r("ebpf-socket", 1, "tcp_crr", "", 1330),
		r("ebpf-socket", 100, "tcp_crr", "", 1200),
		r("ebpf-socket", 1, "http_qps", "false", 300),
		r("iptables", 1, "http_qps", "false", 200),
		r("iptables", 1, "http_qps", "true", 900),
	}
	Compare(rs)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	checks := []struct {
		i       int
		key     string
		want    float64
		present bool
	}{
		{0, "vs_iptables_pct", 20, true}, // reference against the smallest count
		{4, "vs_iptables_pct", 33, true}, // same count
		{4, "vs_ipvs_pct", 166, true},    // 1330/500
		{5, "vs_iptables_pct", 50, true}, // 1200/800 at 100 services
		{5, "vs_ipvs_pct", 0, false},     // no ipvs at 100
		{6, "vs_iptables_pct", 50, true}, // short http against short http, not keep-alive
		{1, "vs_iptables_pct", 0, false}, // not against itself
		{1, "vs_ipvs_pct", 100, true},    // iptables vs ipvs
	}
	for _, c := range checks {
		v, ok := rs[c.i].Metrics.Extra[c.key]
		if ok != c.present || (ok && !near(v, c.want)) {
			t.Errorf("result %d (%s %d %s) %s = %v (present %v), want %v (present %v)", c.i, rs[c.i].LB, rs[c.i].Services, rs[c.i].Workload, c.key, v, ok, c.want, c.present)
		}
	}
}

func TestServiceStep(t *testing.T) {
	if got := step(100, map[string]string{"keepalive": "false"}, "size=350"); got != "services=100 keepalive=false size=350" {
		t.Errorf("step %q", got)
	}
	if got := step(0, nil, ""); got != "" {
		t.Errorf("reference step %q, want empty", got)
	}
}

// placer is a backend as far as Units asks: its placements of a network.
type placer struct {
	backend.Backend
	pls []ground.Placement
}

func (p placer) Placements(string) ([]ground.Placement, error) { return p.pls, nil }
func (p placer) Name() string                                  { return "test" }

// TestUnitsPlacement: a same-host case puts the backends beside the
// client; any other case, on other hosts where the backend has them; a
// network asked in both gets a unit per placement.
func TestUnitsPlacement(t *testing.T) {
	where := func(u sched.Unit) string {
		var s []string
		for _, p := range u.Topology.Pods {
			s = append(s, fmt.Sprintf("%s@%d", p.Name, p.Host))
		}
		return fmt.Sprintf("%s hosts=%d %s", u.Name, u.Topology.Hosts, strings.Join(s, " "))
	}
	multi := placer{pls: []ground.Placement{ground.CrossHost, ground.SameHost}}
	single := placer{pls: []ground.Placement{ground.SameHost}}
	for _, tc := range []struct {
		name  string
		be    backend.Backend
		cases []experiment.Case
		want  []string
	}{
		{"cross", multi, []experiment.Case{{Network: "host-gw", Placement: ground.CrossHost}},
			[]string{"host-gw lb=iptables services=1 hosts=3 c1@1 b1@2 b2@3 b3@2"}},
		{"same", multi, []experiment.Case{{Network: "host-gw", Placement: ground.SameHost}},
			[]string{"host-gw lb=iptables services=1 hosts=1 c1@1 b1@1 b2@1 b3@1"}},
		{"both", multi, []experiment.Case{{Network: "host-gw", Placement: ground.SameHost}, {Network: "host-gw", Placement: ground.CrossHost}},
			[]string{"host-gw lb=iptables services=1 same-host hosts=1 c1@1 b1@1 b2@1 b3@1", "host-gw lb=iptables services=1 cross-host hosts=3 c1@1 b1@2 b2@3 b3@2"}},
		{"one host only", single, []experiment.Case{{Network: "bridge", Placement: ground.SameHost}},
			[]string{"bridge lb=iptables services=1 hosts=1 c1@1 b1@1 b2@1 b3@1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			us, err := Services{}.Units(&experiment.Plan{Cases: tc.cases, LBs: []string{"iptables"}, Backend: tc.be}, []string{"tcp_crr"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, u := range us {
				got = append(got, where(u))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("units\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// clusterPlacer serves only the cluster's proxy and the pod IP, as the
// kubernetes backend does.
type clusterPlacer struct{ placer }

func (clusterPlacer) ServesLB(lb string) bool { return lb == "cluster" || lb == "none" }

// TestUnitsPhased: with PhasedServices (a backend of the run shares its
// services), every count and placement is a phase of its own, numbered
// alike on every backend (so a lab's replica at 10,000 runs beside the
// cluster's 10,000); and a backend that does not serve a load balancer
// gets no unit of it.
func TestUnitsPhased(t *testing.T) {
	multi := placer{pls: []ground.Placement{ground.CrossHost, ground.SameHost}}
	cases := []experiment.Case{{Network: "n", Placement: ground.CrossHost}, {Network: "n", Placement: ground.SameHost}}
	lbs := []string{"none", "iptables", "cluster"}
	for _, tc := range []struct {
		name   string
		be     backend.Backend
		phased bool
		want   []string
	}{
		{"phased, serving every lb", multi, true, []string{
			"n lb=none cross-host phase 0", "n lb=iptables services=1 cross-host phase 0", "n lb=iptables services=10000 cross-host phase 2",
			"n lb=cluster services=1 cross-host phase 0", "n lb=cluster services=10000 cross-host phase 2",
			"n lb=none same-host phase 1", "n lb=iptables services=1 same-host phase 1", "n lb=iptables services=10000 same-host phase 3",
			"n lb=cluster services=1 same-host phase 1", "n lb=cluster services=10000 same-host phase 3"}},
		{"cluster phased", clusterPlacer{multi}, true, []string{
			"n lb=none cross-host phase 0", "n lb=cluster services=1 cross-host phase 0", "n lb=cluster services=10000 cross-host phase 2",
			"n lb=none same-host phase 1", "n lb=cluster services=1 same-host phase 1", "n lb=cluster services=10000 same-host phase 3"}},
		{"cluster not phased", clusterPlacer{multi}, false, []string{
			"n lb=none cross-host phase 0", "n lb=cluster services=1 cross-host phase 0", "n lb=cluster services=10000 cross-host phase 0",
			"n lb=none same-host phase 0", "n lb=cluster services=1 same-host phase 0", "n lb=cluster services=10000 same-host phase 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &experiment.Plan{Cases: cases, LBs: lbs, Services: []int{1, 10000}, Backend: tc.be, PhasedServices: tc.phased}
			us, err := Services{}.Units(p, []string{"tcp_crr"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, u := range us {
				got = append(got, fmt.Sprintf("%s phase %d", u.Name, u.Phase))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("units\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
