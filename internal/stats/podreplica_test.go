package stats

import (
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

func TestPodReplica(t *testing.T) {
	for _, tc := range []struct {
		cni  string
		want string
	}{
		{"flannel v0.28.10 vxlan (flanneld, subnets leased in etcd)", "vxlan"},
		{"flannel v0.28.10 host-gw (flanneld)", "host-gw"},
		{"flannel v0.28.10 udp", ""},
		{"bridge (host-local)", ""},
		{"", ""},
	} {
		env := result.Environment{Kubernetes: &result.Kubernetes{CNI: tc.cni}}
		if got := PodReplica(env); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.cni, got, tc.want)
		}
	}
	if got := PodReplica(result.Environment{}); got != "" {
		t.Errorf("no cluster: %q", got)
	}
}
