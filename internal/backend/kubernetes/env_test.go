package kubernetes

import "testing"

// Cilium's ConfigMap, as its Helm chart writes it, names the systems the
// lab's ebpf network and ebpf-socket / ebpf-tc load balancers replicate.
func TestCiliumSystems(t *testing.T) {
	for _, tc := range []struct {
		data     map[string]string
		pod, svc string
	}{
		{map[string]string{"routing-mode": "native", "kube-proxy-replacement": "true"}, "cilium native-routing", "cilium socket-lb"},
		{map[string]string{"routing-mode": "native", "kube-proxy-replacement": "true", "bpf-lb-sock": "false"}, "cilium native-routing", "cilium tc-lb"},
		{map[string]string{"routing-mode": "tunnel", "tunnel-protocol": "geneve"}, "cilium geneve-tunnel", ""},
		{map[string]string{}, "cilium vxlan-tunnel", ""},
	} {
		got := ciliumSystems(tc.data)
		if got["pod-network"] != tc.pod || got["service-proxy"] != tc.svc {
			t.Errorf("%v: %v, want pod-network %q service-proxy %q", tc.data, got, tc.pod, tc.svc)
		}
	}
}
