package ebpftc

import (
	"context"

	"github.com/cnperf/cnperf/internal/svc"
	"testing"

	"github.com/cnperf/cnperf/internal/svc/svctest"
)

func TestSpreadRoot(t *testing.T) { svctest.Spread(t, (&LB{}).Name()) }

// TestSelfAccessRoot: a pod reaching a service whose only backend is itself
// is served through its loopback.
func TestSelfAccessRoot(t *testing.T) {
	lb := svctest.NewLB(t, (&LB{}).Name())
	e := svctest.NewEnv(t)
	svctest.Serve(t, e.Client)
	ctx := context.Background()
	self := svctest.Service(t, 0, svctest.Endpoints(e.Client))
	mixed := svctest.Service(t, 1, svctest.Endpoints(e.Client, e.Backends[0]))
	t.Cleanup(func() { _ = lb.Teardown(ctx) })
	if err := lb.Sync(ctx, e.Cluster, []svc.Service{self, mixed}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		who, err := svctest.Ask(e.Client, self.Addr())
		if err != nil || who != "c1" {
			t.Fatalf("self-access %d: %q, %v; want c1", i, who, err)
		}
	}
	counts := map[string]int{}
	for i := 0; i < 100; i++ {
		who, err := svctest.Ask(e.Client, mixed.Addr())
		if err != nil {
			t.Fatalf("mixed %d: %v", i, err)
		}
		counts[who]++
	}
	if counts["c1"] == 0 || counts["b1"] == 0 {
		t.Errorf("self and remote backend not both hit: %v", counts)
	}
	svctest.CheckTeardown(t, e, lb)
}
