package labbench

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
)

func TestPodBits(t *testing.T) {
	for _, c := range []struct{ pods, bits int }{{2, 24}, {100, 24}, {253, 24}, {254, 23}, {509, 23}, {510, 22}, {1021, 22}} {
		if got := PodBits(c.pods); got != c.bits {
			t.Errorf("PodBits(%d) = /%d, want /%d", c.pods, got, c.bits)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Hosts: 10, PodsPerHost: 100}, ""},
		{Config{Hosts: 0, PodsPerHost: 100}, "--hosts"},
		{Config{Hosts: 2, PodsPerHost: 1}, "--pods-per-host"},
		{Config{Hosts: 20, PodsPerHost: 1000}, "at most"},
		{Config{Hosts: 2, PodsPerHost: 2, Neighbours: "arp"}, "--neighbours"},
		{Config{Hosts: 2, PodsPerHost: 2, Workers: -1}, "--workers"},
	} {
		err := c.cfg.Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: error %v, want one mentioning %q", c.cfg, err, c.want)
		}
	}
}

// TestRun builds small labs for real, both neighbour modes, and checks
// every figure is there and nothing is left.
func TestRun(t *testing.T) {
	labtest.NeedRoot(t)
	for i, c := range []struct{ network, neigh, probe string }{
		{"host-gw", "dynamic", "cross-host"},
		{"vxlan", "static", "cross-host"},
		{"bridge", "static", "host"},
		{"bridge", "dynamic", "host"},
	} {
		t.Run(c.network+"-"+c.neigh, func(t *testing.T) {
			id := fmt.Sprintf("lb%s%d", lab.NewID(), i)
			res, err := Run(context.Background(), Config{Network: c.network, Hosts: 3, PodsPerHost: 4, Neighbours: c.neigh, ID: id}, t.Logf)
			labtest.AssertClean(t, id)
			if err != nil {
				t.Fatal(err)
			}
			if res.Pods != 12 || res.Probe != c.probe || res.Neighbours != c.neigh || res.Executor != "netlink" {
				t.Errorf("result %+v", res)
			}
			if res.BuildS <= 0 || res.PodsS <= 0 || res.AllReachableS < 0 || res.TeardownS <= 0 || res.CoordinatorRSSBytes <= 0 || res.CoordinatorFDs <= 0 {
				t.Errorf("a figure is missing: %+v", res)
			}
		})
	}
}
