package plan

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/suite"
)

func TestApplyServices(t *testing.T) {
	def, _ := suite.Get("default")
	cip, _ := suite.Get("clusterip")
	cases := []struct {
		name           string
		st             suite.Suite
		lbs, counts    string
		networksGiven  bool
		want           string // error substring, "" for none
		wantLBs        int
		wantCounts     int
		wantFirstCase  string
		wantWorkloads0 string
	}{
		{"no services", def, "", "", false, "", 0, 0, "baseline", "tcp_rr"},
		{"lb alone", def, "iptables,none", "", false, "", 2, 0, "host-gw", "tcp_crr"},
		{"scale", def, "iptables", "1,100,1000,10000", false, "", 1, 4, "host-gw", "tcp_crr"},
		{"suite", cip, "", "", false, "", 6, 2, "host-gw", "tcp_crr"},
		{"suite narrowed", cip, "ebpf-tc", "100", false, "", 1, 1, "host-gw", "tcp_crr"},
		{"unknown", def, "kube-router", "", false, "unknown load balancer", 0, 0, "", ""},
		{"services without lb", def, "", "10", false, "needs --lb", 0, 0, "", ""},
		{"bad count", def, "iptables", "ten", false, "--services", 0, 0, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := Plan{Cases: c.st.Cases, Workloads: c.st.Workloads}
			err := plan.applyServices(c.st, c.lbs, c.counts, c.networksGiven)
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.LBs) != c.wantLBs || len(plan.Services) != c.wantCounts {
				t.Errorf("lbs %v services %v", plan.LBs, plan.Services)
			}
			if plan.Cases[0].Network != c.wantFirstCase || plan.Workloads[0] != c.wantWorkloads0 {
				t.Errorf("cases %v workloads %v", plan.Cases, plan.Workloads)
			}
		})
	}
}
