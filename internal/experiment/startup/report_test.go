package startup

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/section"
)

// The phases chart stacks the known phases in the order a pod goes
// through them, a network's own after them, each the mean over the
// results; overlaid runs name their cells.
func TestHTML(t *testing.T) {
	res := func(net string, ns, links, kv float64) result.Result {
		return result.Result{Network: net, Placement: "cross-host", Workload: Name,
			Metrics: result.Metrics{PhasesMs: map[string]float64{"kv_registration": kv, "links": links, "namespace": ns}}}
	}
	a := &result.Run{Results: []result.Result{res("vxlan", 2, 4, 10), res("vxlan", 4, 6, 20), {Network: "bridge", Workload: Name}}}
	sec := HTML([]section.Input{{Name: "a", Run: a}})
	if len(sec.Charts) != 1 {
		t.Fatalf("%d charts, want 1", len(sec.Charts))
	}
	c := sec.Charts[0]
	var order []string
	for _, s := range c.Series {
		order = append(order, s.Label)
	}
	if got := strings.Join(order, ","); got != "namespace,links,kv_registration" {
		t.Errorf("phases in order %q", got)
	}
	if y := c.Series[1].Points[0].Y; y != 5 || strings.Join(c.Labels, ",") != "vxlan cross-host" {
		t.Errorf("links mean %v labels %v, want 5 and the vxlan cell only", y, c.Labels)
	}
	two := HTML([]section.Input{{Name: "a", Run: a}, {Name: "b", Run: a}})
	if got := strings.Join(two.Charts[0].Labels, ","); got != "a: vxlan cross-host,b: vxlan cross-host" {
		t.Errorf("overlaid labels %q", got)
	}
	// a network's own phases: after the known ones, by name, whatever
	// order the map gives (run it often enough to see two orders)
	own := &result.Run{Results: []result.Result{{Network: "x", Placement: "cross-host", Workload: Name,
		Metrics: result.Metrics{PhasesMs: map[string]float64{"zeta": 1, "links": 1, "alpha": 1, "mid": 1, "namespace": 1}}}}}
	for range 20 {
		var got []string
		for _, s := range HTML([]section.Input{{Name: "a", Run: own}}).Charts[0].Series {
			got = append(got, s.Label)
		}
		if g := strings.Join(got, ","); g != "namespace,links,alpha,mid,zeta" {
			t.Fatalf("phases in order %q, want namespace,links,alpha,mid,zeta", g)
		}
	}
	if s := HTML([]section.Input{{Name: "a", Run: &result.Run{Results: []result.Result{{Network: "bridge", Workload: "tcp_rr"}}}}}); len(s.Charts) != 0 {
		t.Error("a chart for a run without phases")
	}
}
