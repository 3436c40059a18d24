package result

import (
	"bufio"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// Environment is what a result is only comparable with.
type Environment struct {
	Hostname    string            `json:"hostname"`
	Kernel      string            `json:"kernel"`
	CPUModel    string            `json:"cpu_model"`
	CPUs        int               `json:"cpus"`
	MemoryBytes uint64            `json:"memory_bytes,omitempty"`
	GoVersion   string            `json:"go_version"`
	Backend     string            `json:"backend"`
	UnderlayMTU int               `json:"underlay_mtu"`
	Offloads    map[string]string `json:"offloads,omitempty"`
	Sysctls     map[string]string `json:"sysctls"`
	Tools       map[string]string `json:"tools,omitempty"`
	// CPUIdle is the cpuidle driver/governor: how deep idle CPUs sleep
	// changes round-trip latency a lot on some machines (VMs with haltpoll).
	CPUIdle string `json:"cpuidle,omitempty"`
	// CPULatencyUs is the PM QoS CPU latency bound cnperf held during the
	// run (--cpu-latency), absent when it held none.
	CPULatencyUs *int `json:"cpu_latency_us,omitempty"`
	// Docker describes the engine of a docker-backend run: version, API,
	// storage and cgroup drivers, iptables and docker-proxy settings.
	Docker map[string]string `json:"docker,omitempty"`
	// Tunings are the host-tuning profiles applied inside the lab's
	// namespaces (--tuning), one record per profile over every lab tuned.
	Tunings []Tuning `json:"tunings,omitempty"`
	// Kubernetes describes the cluster of a kubernetes-backend run.
	Kubernetes *Kubernetes `json:"kubernetes,omitempty"`
	// Replicas are the real systems the run's lab parts declared they
	// replicate, by ReplicaKey ("network:vxlan": "flannel vxlan"): see
	// Replicator.
	Replicas map[string]string `json:"replicas,omitempty"`
}

// Tuning is what a tuning profile did inside the lab's namespaces: the
// host's own namespace is never touched, so what the profile has that is
// host-wide is listed in NotApplied with the reason.
type Tuning struct {
	Profile string `json:"profile"`
	// Sysctls are the per-namespace sysctls set in every namespace tuned.
	Sysctls map[string]string `json:"sysctls,omitempty"`
	// Labs and Namespaces count what was tuned; NoTrack is how many of
	// those namespaces got the NOTRACK rules (raw PREROUTING and OUTPUT);
	// ConntrackKept names the ones that kept conntrack, with why.
	Labs          int      `json:"labs"`
	Namespaces    int      `json:"namespaces"`
	NoTrack       int      `json:"notrack_namespaces"`
	ConntrackKept []string `json:"conntrack_kept,omitempty"`
	// RPSCPUs is the rps_cpus mask and RPSFlowCnt the rps_flow_cnt written
	// to every receive queue of every device (lo aside): RPSDevices of them.
	RPSCPUs    string `json:"rps_cpus,omitempty"`
	RPSFlowCnt int    `json:"rps_flow_cnt,omitempty"`
	RPSDevices int    `json:"rps_devices"`
	// NotApplied is each part of the profile cnperf did not apply, and why.
	NotApplied []string `json:"not_applied,omitempty"`
}

// Kubernetes is what the API server shows of a cluster: its version, its
// nodes, the pod network (CNI) and the kube-proxy mode, each "unknown (...)"
// with the reason where the API does not show it.
type Kubernetes struct {
	Server    string           `json:"server"`            // the API server's URL
	Context   string           `json:"context,omitempty"` // the kubeconfig context used
	Version   string           `json:"version"`           // the API server's gitVersion
	Platform  string           `json:"platform,omitempty"`
	Nodes     []KubernetesNode `json:"nodes"`
	CNI       string           `json:"cni"`
	ProxyMode string           `json:"kube_proxy_mode"`
	// Systems are the real systems the cluster runs, by role
	// (SystemPodNetwork, SystemServiceProxy), named as the lab's
	// replicas name them ("cilium native-routing", "kube-proxy
	// iptables"); a role whose system is not known is absent.
	Systems map[string]string `json:"systems,omitempty"`
	Image   string            `json:"image"` // the agent image (--image)
	// PullSecret is --image-pull-secret, where one was given.
	PullSecret string `json:"image_pull_secret,omitempty"`
	// Placement is how the nodes were chosen (--nodes, --node-selector,
	// --placement cross-zone, --tolerate); "" = the first schedulable
	// nodes by name. Each result's params say which nodes it ran on.
	Placement string `json:"placement,omitempty"`
}

// KubernetesNode is one node as its status reports it.
type KubernetesNode struct {
	Name             string `json:"name"`
	InternalIP       string `json:"internal_ip,omitempty"`
	KubeletVersion   string `json:"kubelet_version"`
	KernelVersion    string `json:"kernel"`
	OSImage          string `json:"os_image,omitempty"`
	ContainerRuntime string `json:"container_runtime"`
	Architecture     string `json:"architecture,omitempty"`
	CPUs             string `json:"cpus,omitempty"`   // capacity
	Memory           string `json:"memory,omitempty"` // capacity
	PodCIDR          string `json:"pod_cidr,omitempty"`
	Zone             string `json:"zone,omitempty"`          // topology.kubernetes.io/zone
	InstanceType     string `json:"instance_type,omitempty"` // node.kubernetes.io/instance-type
}

// SysctlsThatMatter are the host-wide knobs that change network results.
// Per-namespace ones (net.ipv4.tcp_*) are read inside the lab by the caller.
var SysctlsThatMatter = []string{
	"net.core.rmem_max", "net.core.wmem_max", "net.core.rmem_default", "net.core.wmem_default",
	"net.core.netdev_max_backlog", "net.core.somaxconn", "net.core.busy_poll", "net.core.busy_read",
	"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control",
	"net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_fin_timeout", "net.ipv4.ip_local_port_range",
	"net.ipv4.tcp_mem", "net.ipv4.udp_mem", "fs.file-max", "kernel.sched_autogroup_enabled",
	"net.core.rps_sock_flow_entries",
}

// CaptureHost reads the host-wide part of the environment.
func CaptureHost() Environment {
	e := Environment{
		CPUs:      runtime.NumCPU(),
		GoVersion: runtime.Version(),
		Sysctls:   map[string]string{},
	}
	e.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		e.Kernel = unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
	}
	e.CPUModel = cpuModel()
	drv, _ := os.ReadFile("/sys/devices/system/cpu/cpuidle/current_driver")
	gov, _ := os.ReadFile("/sys/devices/system/cpu/cpuidle/current_governor")
	if len(drv) > 0 {
		e.CPUIdle = strings.TrimSpace(string(drv)) + "/" + strings.TrimSpace(string(gov))
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		e.MemoryBytes = uint64(si.Totalram) * uint64(si.Unit)
	}
	for k, v := range ReadSysctls("/proc/sys", SysctlsThatMatter) {
		e.Sysctls[k] = v
	}
	return e
}

// ReadSysctls reads the named sysctls below root (normally /proc/sys);
// missing ones are left out.
func ReadSysctls(root string, names []string) map[string]string {
	m := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(root + "/" + strings.ReplaceAll(n, ".", "/"))
		if err != nil {
			continue
		}
		m[n] = strings.Join(strings.Fields(string(b)), " ")
	}
	return m
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
