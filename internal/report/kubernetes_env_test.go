package report

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// TestKubernetesEnvironment: a cluster run's nodes with their zones and
// instance types, and how they were chosen, are rows of the environment.
func TestKubernetesEnvironment(t *testing.T) {
	row := func(sec section, name string) string {
		for _, tb := range sec.Tables {
			for _, r := range tb.Rows {
				if r[0] == name {
					return strings.Join(r[1:], "|")
				}
			}
		}
		return ""
	}
	k := &result.Kubernetes{Version: "v1.37.2", CNI: "bridge", ProxyMode: "iptables", Image: "r/a:1",
		Placement: "--placement cross-zone --tolerate dedicated=perf:NoSchedule",
		Nodes:     []result.KubernetesNode{{Name: "n1", Zone: "zone-a", InstanceType: "small"}, {Name: "n2", Zone: "zone-b"}, {Name: "n3"}}}
	for _, c := range []struct {
		env              *result.Kubernetes
		nodes, placement string
	}{
		{k, "n1 (zone-a, small), n2 (zone-b), n3", "--placement cross-zone --tolerate dedicated=perf:NoSchedule; each result's params"},
		{&result.Kubernetes{Nodes: []result.KubernetesNode{{Name: "n1"}}}, "n1", "the first schedulable nodes by name;"},
		{nil, "", ""},
	} {
		sec := environmentSection([]Input{{Name: "a", Run: &result.Run{Environment: result.Environment{Kubernetes: c.env}}}})
		if got := row(sec, "kubernetes nodes"); got != c.nodes {
			t.Errorf("kubernetes nodes %q; want %q", got, c.nodes)
		}
		if got := row(sec, "kubernetes placement"); !strings.HasPrefix(got, c.placement) || (c.placement == "") != (got == "") {
			t.Errorf("kubernetes placement %q; want %q...", got, c.placement)
		}
	}
}
