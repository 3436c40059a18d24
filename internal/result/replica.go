package result

import "strings"

// A replica is a part of cnperf's lab (a network mode, a load balancer)
// that imitates a real system's datapath: the lab's vxlan is Flannel's
// vxlan backend, its ebpf network Cilium's datapath in native routing,
// its iptables load balancer kube-proxy's iptables mode. The part says so
// itself (Replicator); a run records what the parts it ran declared
// (Environment.Replicas), and a cluster run records which real systems
// the cluster ran (Kubernetes.Systems), in the same words: a reader pairs
// real with replica from the file alone, without linking the parts.

// Replicator is implemented by a part that replicates a real system:
// Replicates names it ("flannel vxlan", "kube-proxy iptables"), as a
// backend that runs the real one records it in Kubernetes.Systems.
type Replicator interface {
	Replicates() string
}

// The roles of a cluster's real systems (Kubernetes.Systems keys).
const (
	SystemPodNetwork   = "pod-network"
	SystemServiceProxy = "service-proxy"
)

// The kinds of part in Environment.Replicas keys.
const (
	ReplicaNetwork = "network"
	ReplicaLB      = "lb"
)

// ReplicaKey is the Environment.Replicas key of a part: "network:vxlan",
// "lb:iptables".
func ReplicaKey(kind, name string) string { return kind + ":" + name }

// ReplicaOf is the part of that kind whose declaration is system (the
// lab's network or load balancer replicating it), "" where none of the
// run's parts declared it.
func (e Environment) ReplicaOf(kind, system string) string {
	if system == "" {
		return ""
	}
	found := ""
	for k, v := range e.Replicas {
		name, ok := strings.CutPrefix(k, kind+":")
		if !ok || v != system {
			continue
		}
		if found != "" && found != name {
			return "" // two parts claim it: ambiguous, none
		}
		found = name
	}
	return found
}

// System is the real system of role the run's cluster ran, "" for none.
func (e Environment) System(role string) string {
	if e.Kubernetes == nil {
		return ""
	}
	return e.Kubernetes.Systems[role]
}

// legacyReplicas are the declarations the parts made before results files
// recorded them (stored runs of November 2026 and earlier): read into
// such a file so that its pairs stay as they were printed.
var legacyReplicas = map[string]string{
	"network:vxlan": "flannel vxlan", "network:host-gw": "flannel host-gw",
	"lb:iptables": "kube-proxy iptables", "lb:nftables": "kube-proxy nftables", "lb:ipvs": "kube-proxy ipvs",
}

// upgradeReplicas fills what a file written before Replicas and Systems
// existed said in other words: the parts' declarations of the time, and
// the cluster's systems from its CNI and kube-proxy descriptions ("flannel
// v0.28.10 vxlan (...)", "iptables (kube-proxy /proxyMode)").
func (r *Run) upgradeReplicas() {
	env := &r.Environment
	if env.Kubernetes == nil || env.Replicas != nil || env.Kubernetes.Systems != nil {
		return
	}
	env.Replicas = map[string]string{}
	for k, v := range legacyReplicas {
		env.Replicas[k] = v
	}
	sys := map[string]string{}
	if f := strings.Fields(env.Kubernetes.CNI); len(f) >= 3 && f[0] == "flannel" {
		sys[SystemPodNetwork] = "flannel " + f[2]
	}
	if mode, _, _ := strings.Cut(env.Kubernetes.ProxyMode, " "); mode == "iptables" || mode == "nftables" || mode == "ipvs" {
		sys[SystemServiceProxy] = "kube-proxy " + mode
	}
	env.Kubernetes.Systems = sys
}
