package result

import (
	"reflect"
	"testing"
)

// A file written before runs recorded declarations and systems reads as
// it was printed: Flannel's backends and kube-proxy's modes paired with
// the lab's parts that replicated them then.
func TestUpgradeReplicas(t *testing.T) {
	for _, tc := range []struct {
		cni, proxy string
		want       map[string]string
	}{
		{"flannel v0.28.10 vxlan (flanneld, subnets leased in etcd)", "iptables (kube-proxy /proxyMode)", map[string]string{"pod-network": "flannel vxlan", "service-proxy": "kube-proxy iptables"}},
		{"flannel v0.28.10 host-gw (flanneld)", "nftables (ConfigMap kube-system/kube-proxy)", map[string]string{"pod-network": "flannel host-gw", "service-proxy": "kube-proxy nftables"}},
		{"bridge+host-local (containernetworking-plugins), host-gw routes", "unknown (no kube-proxy)", map[string]string{}},
	} {
		r := Run{Environment: Environment{Kubernetes: &Kubernetes{CNI: tc.cni, ProxyMode: tc.proxy}}}
		r.upgradeReplicas()
		if !reflect.DeepEqual(r.Environment.Kubernetes.Systems, tc.want) {
			t.Errorf("%q / %q: systems %v, want %v", tc.cni, tc.proxy, r.Environment.Kubernetes.Systems, tc.want)
		}
		if r.Environment.Replicas["network:vxlan"] != "flannel vxlan" {
			t.Errorf("%q: legacy declarations not read in: %v", tc.cni, r.Environment.Replicas)
		}
	}
	// a file that records them is read as written
	r := Run{Environment: Environment{Replicas: map[string]string{}, Kubernetes: &Kubernetes{CNI: "flannel v0.28.10 vxlan", Systems: map[string]string{}}}}
	r.upgradeReplicas()
	if len(r.Environment.Replicas) != 0 || len(r.Environment.Kubernetes.Systems) != 0 {
		t.Errorf("a new file was rewritten: %+v", r.Environment)
	}
}
