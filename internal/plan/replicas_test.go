package plan

import (
	"reflect"
	"testing"

	_ "github.com/cnperf/cnperf/internal/netmode/all"
	_ "github.com/cnperf/cnperf/internal/svc/all"
)

// A plan records what its parts declare they replicate, and nothing for
// parts that replicate nothing (bridge, none).
func TestReplicas(t *testing.T) {
	p := Plan{Cases: []Case{{Network: "vxlan"}, {Network: "bridge"}, {Network: "ebpf"}, {Network: "host-gw"}},
		LBs: []string{"none", "iptables", "nftables", "ebpf-socket", "ebpf-tc"}}
	want := map[string]string{
		"network:vxlan": "flannel vxlan", "network:ebpf": "cilium native-routing", "network:host-gw": "flannel host-gw",
		"lb:iptables": "kube-proxy iptables", "lb:nftables": "kube-proxy nftables",
		"lb:ebpf-socket": "cilium socket-lb", "lb:ebpf-tc": "cilium tc-lb",
	}
	if got := p.Replicas(); !reflect.DeepEqual(got, want) {
		t.Errorf("Replicas() = %v\nwant %v", got, want)
	}
	if got := (&Plan{Cases: []Case{{Network: "bridge"}}}).Replicas(); got != nil {
		t.Errorf("bridge only: %v", got)
	}
}
