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
}

// SysctlsThatMatter are the host-wide knobs that change network results.
// Per-namespace ones (net.ipv4.tcp_*) are read inside the lab by the caller.
var SysctlsThatMatter = []string{
	"net.core.rmem_max", "net.core.wmem_max", "net.core.rmem_default", "net.core.wmem_default",
	"net.core.netdev_max_backlog", "net.core.somaxconn", "net.core.busy_poll", "net.core.busy_read",
	"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control",
	"net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_fin_timeout", "net.ipv4.ip_local_port_range",
	"net.ipv4.tcp_mem", "net.ipv4.udp_mem", "fs.file-max", "kernel.sched_autogroup_enabled",
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
