package dockerlab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/hostprobe"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/result"
)

// What a deployment tells about itself and its platform while it is
// measured: the engines, the machine's CPU, the interfaces' and the
// kernel's counters, the engines' own CPU.

// Environment records the engines: version, API, storage and cgroup
// driver, docker-proxy and swarm.
func (d *Deployment) Environment(ctx context.Context, env *result.Environment) {
	if env.Docker != nil {
		return
	}
	var en *engine
	for _, p := range d.Pods {
		en = p.en
		break
	}
	if en == nil {
		return
	}
	m := map[string]string{"backend": Name, "image": en.image,
		"engines":        strconv.Itoa(len(d.c.engines)) + " started, one per lab host, in lab " + d.c.lab.ID,
		"userland_proxy": strconv.FormatBool(d.b.userlandProxy()), "iptables": "true"}
	en.e.RecordVersions(m)
	if in, err := en.e.EngineInfo(ctx); err == nil {
		m["storage_driver"] = in.Driver
		m["cgroup_driver"] = in.CgroupDriver
		m["security_options"] = strings.Join(in.SecurityOptions, ",")
		m["swarm"] = in.Swarm.LocalNodeState
	}
	env.Docker = m
}

// MachineCPU implements backend.CPUMeter: the engines share this
// machine's kernel.
func (d *Deployment) MachineCPU(context.Context) (ground.CPUTimes, error) {
	return hostprobe.ReadProcStat("/proc/stat")
}

// RxBytes implements backend.RxCounter: the receiving container's
// interface (eth0: docker0's veth, the overlay's, or in host mode the lab
// host's underlay), loopback when the two share a namespace.
func (d *Deployment) RxBytes(_ context.Context, name, peer string) (uint64, bool) {
	p, q := d.Pods[name], d.Pods[peer]
	if p == nil || q == nil || p.PID == 0 {
		return 0, false
	}
	dev := "eth0"
	if d.kind.mode == modeHost {
		dev = p.en.host.Dev
	}
	return hostprobe.RxBytes(p.PID, q.PID, dev)
}

// SNMP implements backend.SNMPReader.
func (d *Deployment) SNMP(_ context.Context, name string) (map[string]int64, error) {
	p := d.Pods[name]
	if p == nil || p.PID == 0 {
		return nil, fmt.Errorf("no pod %q", name)
	}
	return hostprobe.SNMP(p.PID)
}

// DaemonCPUSeconds implements backend.DaemonMeter: for nat the CPU time
// of the engines' docker-proxy processes (the user-space proxy, in the
// path only where a client on the server's host dials the published
// port), for docker-overlay that of the engines (dockerd: the swarm's
// gossip and the overlay's control plane).
func (d *Deployment) DaemonCPUSeconds() (float64, bool) {
	var comm string
	switch {
	case d.kind.publish:
		comm = "docker-proxy"
	case d.kind.mode == modeOverlay:
		comm = "dockerd"
	default:
		return 0, false
	}
	var total float64
	found := false
	for _, pid := range d.c.enginePIDs() {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		if err != nil || strings.TrimSpace(string(b)) != comm {
			continue
		}
		found = true
		total += hostprobe.ProcCPUSeconds(pid)
	}
	return total, found
}

// enginePIDs lists the processes of every engine's cgroup (dockerd,
// containerd, shims, docker-proxy), read in the first hierarchy.
func (c *cluster) enginePIDs() []int {
	roots := lab.CgroupRoots()
	if len(roots) == 0 {
		return nil
	}
	var out []int
	c.mu.Lock()
	hosts := make([]int, 0, len(c.engines))
	for h := range c.engines {
		hosts = append(hosts, h)
	}
	c.mu.Unlock()
	for _, h := range hosts {
		b, err := os.ReadFile(filepath.Join(roots[0], c.cgroupOf(h), "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}
