package stats

import (
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// The lab's replica of a cluster's pod network and service proxy is the
// part whose declaration names the system the cluster ran; none where no
// part, or two, declare it.
func TestReplicaFromDeclarations(t *testing.T) {
	declared := map[string]string{
		"network:vxlan": "flannel vxlan", "network:ebpf": "cilium native-routing",
		"lb:iptables": "kube-proxy iptables", "lb:ebpf-socket": "cilium socket-lb", "lb:ebpf-tc": "cilium tc-lb",
	}
	for _, tc := range []struct {
		name          string
		replicas      map[string]string
		systems       map[string]string
		wantPod, want string
	}{
		{"flannel and kube-proxy", declared, map[string]string{"pod-network": "flannel vxlan", "service-proxy": "kube-proxy iptables"}, "vxlan", "iptables"},
		{"cilium kpr", declared, map[string]string{"pod-network": "cilium native-routing", "service-proxy": "cilium socket-lb"}, "ebpf", "ebpf-socket"},
		{"cilium tc only", declared, map[string]string{"pod-network": "cilium vxlan-tunnel", "service-proxy": "cilium tc-lb"}, "", "ebpf-tc"},
		{"not ran in the lab", map[string]string{"network:vxlan": "flannel vxlan"}, map[string]string{"pod-network": "cilium native-routing", "service-proxy": "kube-proxy nftables"}, "", ""},
		{"two claim it", map[string]string{"network:a": "flannel vxlan", "network:b": "flannel vxlan"}, map[string]string{"pod-network": "flannel vxlan"}, "", ""},
		{"system unknown", declared, nil, "", ""},
	} {
		env := result.Environment{Replicas: tc.replicas, Kubernetes: &result.Kubernetes{Systems: tc.systems}}
		if got := PodReplica(env); got != tc.wantPod {
			t.Errorf("%s: pod replica %q, want %q", tc.name, got, tc.wantPod)
		}
		if got := ProxyLB(env); got != tc.want {
			t.Errorf("%s: proxy replica %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := PodReplica(result.Environment{Replicas: declared}); got != "" {
		t.Errorf("no cluster: %q", got)
	}
}
