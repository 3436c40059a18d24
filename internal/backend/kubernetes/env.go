package kubernetes

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/result"
)

// AnnotCNI on a node names its pod network where the API shows it no other
// way (`cnperf cluster up` sets it: its CNI is plain files on the nodes).
const AnnotCNI = "cnperf.cni"

// ProxyMetricsPort is where kube-proxy serves /proxyMode (its metrics
// server), read through the API server's node proxy.
const ProxyMetricsPort = 10249

// cniDaemons are the pod-name prefixes of known CNI daemons, and the
// namespaces they run in.
var (
	cniDaemons = []struct{ prefix, name string }{
		{"calico-node", "calico"}, {"cilium-operator", "cilium"}, {"cilium", "cilium"},
		{"kube-flannel", "flannel"}, {"canal", "canal"}, {"weave-net", "weave"},
		{"antrea-agent", "antrea"}, {"kube-router", "kube-router"}, {"ovnkube-node", "ovn-kubernetes"},
		{"kube-ovn-cni", "kube-ovn"}, {"kindnet", "kindnet"}, {"aws-node", "aws-vpc-cni"},
	}
	cniNamespaces = []string{"kube-system", "kube-flannel", "calico-system"}
	// node annotations some CNIs leave
	cniAnnotations = []struct{ key, name string }{
		{"flannel.alpha.coreos.com/backend-type", "flannel"},
		{"projectcalico.org/IPv4Address", "calico"},
		{"io.cilium.network.ipv4-cilium-host", "cilium"},
	}
)

// Describe is the cluster as the API shows it: version, nodes, CNI and
// kube-proxy mode, each "unknown (...)" with the reason where it does not.
func Describe(ctx context.Context, cl *Clients, image string) *result.Kubernetes {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	k := &result.Kubernetes{Server: cl.Server, Context: cl.Context, Image: image, Nodes: []result.KubernetesNode{}}
	if v, err := cl.Version.ServerVersion(); err == nil {
		k.Version, k.Platform = v.GitVersion, v.Platform
	} else {
		k.Version = "unknown (" + oneLine(err.Error()) + ")"
	}
	var nodes []corev1.Node
	if nl, err := cl.Core.Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		nodes = nl.Items
		sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	}
	for _, n := range nodes {
		in := n.Status.NodeInfo
		kn := result.KubernetesNode{
			Name: n.Name, KubeletVersion: in.KubeletVersion, KernelVersion: in.KernelVersion,
			OSImage: in.OSImage, ContainerRuntime: in.ContainerRuntimeVersion, Architecture: in.Architecture,
			PodCIDR: n.Spec.PodCIDR, Zone: zoneOf(&n), InstanceType: instanceTypeOf(&n),
		}
		if q, ok := n.Status.Capacity[corev1.ResourceCPU]; ok {
			kn.CPUs = q.String()
		}
		if q, ok := n.Status.Capacity[corev1.ResourceMemory]; ok {
			kn.Memory = q.String()
		}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && kn.InternalIP == "" {
				kn.InternalIP = a.Address
			}
		}
		k.Nodes = append(k.Nodes, kn)
	}
	daemons := systemPods(ctx, cl)
	k.CNI = cniOf(nodes, daemons)
	k.ProxyMode = proxyMode(ctx, cl, nodes, daemons, k.CNI)
	k.Systems = systemsOf(ctx, cl, nodes, k.ProxyMode)
	return k
}

// AnnotSystems on a node names the real systems the cluster runs, by
// role, as "pod-network=cilium native-routing,service-proxy=cilium
// socket-lb" (`cnperf cluster up` sets it; result.Kubernetes.Systems).
const AnnotSystems = "cnperf.systems"

// systemsOf names the real systems the cluster runs, in the words of the
// lab's replicas (result.Replicator): from cnperf's node annotation where
// `cnperf cluster up` made the cluster, else from what the cluster shows:
// Cilium's ConfigMap, Flannel's node annotation, kube-proxy's mode. A role
// it cannot tell is left out.
func systemsOf(ctx context.Context, cl *Clients, nodes []corev1.Node, proxy string) map[string]string {
	out := map[string]string{}
	for _, n := range nodes {
		if v := n.Annotations[AnnotSystems]; v != "" {
			for _, kv := range strings.Split(v, ",") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					out[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
			return out
		}
	}
	if cm, err := cl.Core.ConfigMaps("kube-system").Get(ctx, "cilium-config", metav1.GetOptions{}); err == nil {
		for k, v := range ciliumSystems(cm.Data) {
			out[k] = v
		}
	}
	for _, n := range nodes {
		if v := n.Annotations["flannel.alpha.coreos.com/backend-type"]; v != "" && out[result.SystemPodNetwork] == "" {
			out[result.SystemPodNetwork] = "flannel " + v
		}
	}
	if mode, _, _ := strings.Cut(proxy, " "); out[result.SystemServiceProxy] == "" && (mode == "iptables" || mode == "nftables" || mode == "ipvs") {
		out[result.SystemServiceProxy] = "kube-proxy " + mode
	}
	return out
}

// ciliumSystems reads Cilium's ConfigMap (kube-system/cilium-config, as
// its Helm chart writes it): the routing mode and whether it replaces
// kube-proxy, with or without socket load balancing.
func ciliumSystems(data map[string]string) map[string]string {
	out := map[string]string{}
	switch routing, tunnel := data["routing-mode"], data["tunnel-protocol"]; {
	case routing == "native":
		out[result.SystemPodNetwork] = "cilium native-routing"
	case routing == "tunnel" || routing == "":
		if tunnel == "" {
			tunnel = "vxlan"
		}
		out[result.SystemPodNetwork] = "cilium " + tunnel + "-tunnel"
	}
	if data["kube-proxy-replacement"] == "true" {
		if data["bpf-lb-sock"] == "false" {
			out[result.SystemServiceProxy] = "cilium tc-lb"
		} else {
			out[result.SystemServiceProxy] = "cilium socket-lb"
		}
	}
	return out
}

// systemPods are the pods of the namespaces CNI daemons and kube-proxy
// run in (what the kubeconfig's user may list of them).
func systemPods(ctx context.Context, cl *Clients) []corev1.Pod {
	var out []corev1.Pod
	for _, ns := range cniNamespaces {
		if pl, err := cl.Core.Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
			out = append(out, pl.Items...)
		}
	}
	return out
}

// cniOf names the pod network from the daemons running or the nodes'
// annotations.
func cniOf(nodes []corev1.Node, pods []corev1.Pod) string {
	for _, n := range nodes {
		if v := n.Annotations[AnnotCNI]; v != "" {
			return v + " (node annotation " + AnnotCNI + ")"
		}
	}
	for _, p := range pods {
		for _, d := range cniDaemons {
			if strings.HasPrefix(p.Name, d.prefix) {
				return d.name + " (pods " + p.Namespace + "/" + d.prefix + "*)"
			}
		}
	}
	for _, n := range nodes {
		for _, a := range cniAnnotations {
			if v, ok := n.Annotations[a.key]; ok {
				s := a.name + " (node annotation " + a.key
				if a.name == "flannel" {
					s += "=" + v
				}
				return s + ")"
			}
		}
	}
	return "unknown (no known CNI daemon in " + strings.Join(cniNamespaces, ", ") + ", no node annotation)"
}

// proxyMode is the mode kube-proxy runs in: what kube-proxy itself says
// (/proxyMode through the node proxy), else its ConfigMap (kubeadm), else
// its pods' --proxy-mode.
func proxyMode(ctx context.Context, cl *Clients, nodes []corev1.Node, pods []corev1.Pod, cni string) string {
	var why []string
	if cl.NodeProxy != nil && len(nodes) > 0 {
		var modes []string
		for _, n := range nodes {
			b, err := cl.NodeProxy(ctx, n.Name, ProxyMetricsPort, "proxyMode")
			if err != nil {
				why = append(why, fmt.Sprintf("%s:%d/proxyMode: %s", n.Name, ProxyMetricsPort, clip(err.Error())))
				break
			}
			modes = append(modes, n.Name+"="+strings.TrimSpace(string(b)))
		}
		if len(modes) == len(nodes) {
			return modeSummary(modes) + " (kube-proxy /proxyMode)"
		}
	}
	if cm, err := cl.Core.ConfigMaps("kube-system").Get(ctx, "kube-proxy", metav1.GetOptions{}); err == nil {
		for _, v := range cm.Data {
			if m, ok := yamlField(v, "mode"); ok {
				if m == "" {
					return "iptables (ConfigMap kube-system/kube-proxy: mode unset, the default)"
				}
				return m + " (ConfigMap kube-system/kube-proxy)"
			}
		}
	} else {
		why = append(why, "ConfigMap kube-system/kube-proxy: "+clip(err.Error()))
	}
	kp := false
	for _, p := range pods {
		if !strings.HasPrefix(p.Name, "kube-proxy") {
			continue
		}
		kp = true
		for _, c := range p.Spec.Containers {
			for _, a := range append(append([]string{}, c.Command...), c.Args...) {
				if m, ok := strings.CutPrefix(a, "--proxy-mode="); ok {
					return m + " (pod " + p.Name + " --proxy-mode)"
				}
			}
		}
	}
	if !kp && strings.HasPrefix(cni, "cilium") {
		return "unknown (no kube-proxy pods: cilium's kube-proxy replacement, perhaps)"
	}
	return "unknown (" + strings.Join(why, "; ") + ")"
}

// modeSummary is "iptables" when every node says so, else each node's.
func modeSummary(modes []string) string {
	first := ""
	for i, m := range modes {
		_, v, _ := strings.Cut(m, "=")
		if i == 0 {
			first = v
		} else if v != first {
			return strings.Join(modes, ", ")
		}
	}
	return first
}

// yamlField finds a top-level "key: value" line of a YAML document.
func yamlField(doc, key string) (string, bool) {
	for _, line := range strings.Split(doc, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == key {
			v = strings.TrimSpace(v)
			return strings.Trim(v, `"'`), true
		}
	}
	return "", false
}
