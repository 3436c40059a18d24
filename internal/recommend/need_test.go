package recommend

import (
	"slices"
	"strings"
	"testing"
)

// TestNeedCoversEveryRule: what recommend measures for a profile (given
// no results file) covers every rule of the profile, with as few
// workloads as the candidates allow, the caller's order breaking ties.
func TestNeedCoversEveryRule(t *testing.T) {
	cands := []string{"tcp_rr", "tcp_stream", "udp_rr", "udp_stream", "tcp_crr", "http_qps", "sockperf_tcp", "iperf3_tcp"}
	for _, c := range []struct {
		profile  string
		want     string
		services bool
	}{
		{"latency", "tcp_rr", false},
		{"throughput", "tcp_stream", false},
		{"short-connections", "tcp_crr", false},
		{"mixed", "tcp_rr,tcp_stream,tcp_crr", false},
		{"many-services", "tcp_rr", true},
	} {
		n, err := NeedOf(c.profile, cands)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(n.Workloads, ","); got != c.want || n.Services != c.services {
			t.Errorf("%s: workloads %s services %v, want %s %v", c.profile, got, n.Services, c.want, c.services)
		}
		if len(n.Uncovered) > 0 {
			t.Errorf("%s: uncovered %v", c.profile, n.Uncovered)
		}
		// every rule of the profile is covered by one chosen workload (or
		// is a figure of the service run itself)
		for _, r := range Rules {
			if r.Profile != c.profile || (r.Cells == Services && r.Better != "") {
				continue
			}
			rule := r.Metric + " of " + string(r.Cells)
			found := false
			for _, w := range n.Workloads {
				found = found || slices.Contains(n.Covers[w], rule)
			}
			if !found {
				t.Errorf("%s: rule %s not covered by %v", c.profile, rule, n.Covers)
			}
		}
	}
	// the order is the caller's: udp_rr first measures latency as well
	n, _ := NeedOf("latency", []string{"udp_rr", "tcp_rr"})
	if strings.Join(n.Workloads, ",") != "udp_rr" {
		t.Errorf("latency with udp_rr preferred: %v", n.Workloads)
	}
	// nothing that measures a profile: said, not guessed
	n, _ = NeedOf("throughput", []string{"tcp_rr"})
	if len(n.Workloads) != 0 || len(n.Uncovered) != 2 {
		t.Errorf("throughput from tcp_rr alone: %+v", n)
	}
	if _, err := NeedOf("fastest", cands); err == nil {
		t.Error("unknown profile accepted")
	}
}

// TestExcluded: the constraints remove networks before anything is
// measured as Rank removes their cells, reason included.
func TestExcluded(t *testing.T) {
	cons, _ := ParseConstraints("no-l2-adjacency,cloud-route-limit=50")
	for _, c := range []struct{ network, want string }{
		{"host-gw", "one L2 segment"},
		{"cloud-routed", "cloud route per node"},
		{"vxlan", ""},
		{"baseline", ""},
	} {
		if got := Excluded(c.network, cons); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("Excluded(%s) = %q, want %q", c.network, got, c.want)
		}
	}
}

// TestServicesAndMixedRankAsTheirRules: many-services ranks load balancers
// by the rate at the most services (ipvs ahead at 10,000 though behind at
// 1), and mixed weighs long and short connections and throughput.
func TestServicesAndMixedRankAsTheirRules(t *testing.T) {
	run := synth(4, 0.01, []cellSpec{
		{network: "host-gw", workload: "tcp_rr", lb: "none", tps: 20000, p50: 50, p99: 100},
		{network: "host-gw", workload: "tcp_rr", lb: "iptables", services: 1, tps: 19000, p50: 52, p99: 105},
		{network: "host-gw", workload: "tcp_rr", lb: "ipvs", services: 1, tps: 18000, p50: 55, p99: 110},
		{network: "host-gw", workload: "tcp_rr", lb: "iptables", services: 10000, tps: 9000, p50: 110, p99: 300},
		{network: "host-gw", workload: "tcp_rr", lb: "ipvs", services: 10000, tps: 17500, p50: 57, p99: 115},
	})
	rs, err := Rank(run, "many-services", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order(rs), " "); got != "host-gw lb=ipvs host-gw lb=iptables" {
		t.Errorf("many-services ranked %q, want ipvs first (the rate at 10,000 services)", got)
	}
	run = synth(4, 0.01, []cellSpec{
		{network: "baseline", workload: "tcp_rr", tps: 10000, p50: 90, p99: 200},
		{network: "host-gw", workload: "tcp_rr", tps: 9500, p50: 95, p99: 210},
		{network: "vxlan", workload: "tcp_rr", tps: 7000, p50: 130, p99: 300},
		{network: "baseline", workload: "tcp_stream", bps: 10e9},
		{network: "host-gw", workload: "tcp_stream", bps: 9e9},
		{network: "vxlan", workload: "tcp_stream", bps: 6e9},
		{network: "baseline", workload: "tcp_crr", tps: 3000, p50: 300, p99: 900},
		{network: "host-gw", workload: "tcp_crr", tps: 2800, p50: 320, p99: 950},
		{network: "vxlan", workload: "tcp_crr", tps: 2000, p50: 450, p99: 1300},
	})
	rs, err = Rank(run, "mixed", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order(rs), " "); got != "host-gw vxlan" {
		t.Errorf("mixed ranked %q, want host-gw ahead on every figure", got)
	}
}
