package netmode_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	_ "github.com/cnperf/cnperf/internal/netmode/hostgw"
)

// TestAddPodsAddresses builds pods eight at a time (recorded, not run) and
// checks each got the address it would have got one by one.
func TestAddPodsAddresses(t *testing.T) {
	l, err := lab.New(lab.Config{ID: "x", Hosts: 2, Exec: &lab.Recorder{}, NoStateDirs: true, Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := netmode.Get("host-gw")
	var reqs []netmode.PodReq
	for i := 0; i < 40; i++ {
		reqs = append(reqs, netmode.PodReq{Host: l.Hosts[i%2], Name: fmt.Sprintf("p%d", i)})
	}
	pods, err := netmode.AddPods(context.Background(), m, l, reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pods {
		want := fmt.Sprintf("10.244.%d.%d", i%2+1, i/2+2)
		if p.Name != reqs[i].Name || p.Host != reqs[i].Host || p.IP.String() != want {
			t.Errorf("pod %d: %s on %s at %s, want %s on %s at %s", i, p.Name, p.Host.Name, p.IP, reqs[i].Name, reqs[i].Host.Name, want)
		}
	}
	if next, _ := l.Hosts[0].NextPodIP(); next.String() != "10.244.1.22" {
		t.Errorf("the next address after them is %s, want 10.244.1.22", next)
	}
}
