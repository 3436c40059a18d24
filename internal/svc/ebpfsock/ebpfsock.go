// Package ebpfsock is Cilium's socket-level load balancing: cgroup/connect4
// replaces a service's cluster IP and port by a backend's when a client
// socket connects (TCP, connected UDP), cgroup/sendmsg4 does it per datagram
// for unconnected UDP and cgroup/recvmsg4 shows the replies as coming from
// the service. No packet carries the VIP, so there is no NAT and no
// conntrack entry for the service on the path. The programs are attached to
// a cgroup v2 directory cnperf makes (cnperf-<lab id>-svc under the cgroup2
// mount) and the client agents' processes are moved into it; Teardown moves
// them back, detaches and removes the directory.
package ebpfsock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cnperf/cnperf/internal/cleanup"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/svc"
	"github.com/cnperf/cnperf/internal/svc/bpfmaps"
)

func init() {
	svc.Register(func() svc.LB { return &LB{} })
	cleanup.RegisterHostState("ebpf-socket cgroup", cleanup.Func(CleanCgroup))
}

// LB is the socket load balancer.
type LB struct {
	mu      sync.Mutex
	objs    *sockObjects
	links   []link.Link
	mount   string
	dir     string         // our cgroup directory
	origin  map[int]string // moved pid -> its cgroup before
	keys    map[bpfmaps.SvcKey]bool
	progIDs []int
}

// Name implements svc.LB.
func (*LB) Name() string { return "ebpf-socket" }

// Replicates implements result.Replicator: Cilium's socket-level load balancing (kube-proxy replacement with --bpf-lb-sock), as a cluster
// running it records it.
func (*LB) Replicates() string { return "cilium socket-lb" }

// Summary implements svc.LB.
func (*LB) Summary() string {
	return "Cilium socket LB: cgroup connect4/sendmsg4/recvmsg4 rewrite the service address to a backend's"
}

// Options implements svc.LB: it takes none.
func (*LB) Options() []option.Spec { return nil }

// Requires implements svc.LB.
func (*LB) Requires() svc.Requirements {
	return svc.Requirements{
		Kernel: []netmode.KernelFeature{
			{Config: "CONFIG_BPF_SYSCALL", What: "eBPF"},
			{Config: "CONFIG_CGROUP_BPF", What: "eBPF programs on cgroups"},
		},
	}
}

// CgroupDir is the cgroup directory the programs are attached to ("" before Sync).
func (lb *LB) CgroupDir() string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.dir
}

// ProgramIDs are the kernel ids of the loaded programs, for leak checks.
func (lb *LB) ProgramIDs() []int {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return append([]int(nil), lb.progIDs...)
}

// Sync implements svc.LB. The first call loads and attaches the programs
// and moves the clients' processes into the cgroup; every call rewrites
// the maps.
func (lb *LB) Sync(ctx context.Context, c *svc.Cluster, services []svc.Service) (err error) {
	if err := svc.Validate(services); err != nil {
		return err
	}
	if err := svc.Check(lb); err != nil {
		return err
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.objs == nil {
		if err := lb.setup(c); err != nil {
			lb.teardownLocked()
			return err
		}
	}
	keys, err := bpfmaps.Fill(lb.objs.Services, lb.objs.Backends, services, lb.keys)
	lb.keys = keys
	return err
}

func (lb *LB) setup(c *svc.Cluster) error {
	// a cgroup v1 host has no v2 mount: cnperf mounts one of its own
	// (lab.Cgroup2Dir), released when the last cnperf cgroup in it goes
	mount, err := lab.EnsureCgroup2()
	if err != nil {
		return svc.Unsupported("ebpf-socket: %v", err)
	}
	objs := &sockObjects{}
	if err := loadSockObjects(objs, nil); err != nil {
		return fmt.Errorf("loading the socket LB programs: %w", err)
	}
	lb.objs, lb.mount = objs, mount
	for _, p := range []*ebpf.Program{objs.CnperfConnect4, objs.CnperfSendmsg4, objs.CnperfRecvmsg4} {
		if info, err := p.Info(); err == nil {
			if id, ok := info.ID(); ok {
				lb.progIDs = append(lb.progIDs, int(id))
			}
		}
	}
	id := "test"
	if c.Lab != nil {
		id = c.Lab.ID
	}
	dir := filepath.Join(mount, CgroupName(id))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("creating cgroup %s: %w", dir, err)
	}
	lb.dir = dir
	for _, a := range []struct {
		p *ebpf.Program
		t ebpf.AttachType
	}{
		{objs.CnperfConnect4, ebpf.AttachCGroupInet4Connect},
		{objs.CnperfSendmsg4, ebpf.AttachCGroupUDP4Sendmsg},
		{objs.CnperfRecvmsg4, ebpf.AttachCGroupUDP4Recvmsg},
	} {
		l, err := link.AttachCgroup(link.CgroupOptions{Path: dir, Attach: a.t, Program: a.p})
		if err != nil {
			return fmt.Errorf("attaching %s to %s: %w", a.p, dir, err)
		}
		lb.links = append(lb.links, l)
	}
	lb.origin = map[int]string{}
	for _, cl := range c.Clients {
		for _, pid := range cl.PIDs {
			orig, err := bpfmaps.ProcCgroup(pid)
			if err != nil {
				return err
			}
			if err := writePID(dir, pid); err != nil {
				return fmt.Errorf("moving process %d into %s: %w", pid, dir, err)
			}
			lb.origin[pid] = orig
		}
	}
	return nil
}

func writePID(dir string, pid int) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

// Teardown implements svc.LB.
func (lb *LB) Teardown(context.Context) error {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.teardownLocked()
}

func (lb *LB) teardownLocked() error {
	var errs []error
	for pid, orig := range lb.origin {
		// only a process still in our cgroup: a pid that has since been
		// reused belongs to someone else, who must stay where it is
		if cur, err := bpfmaps.ProcCgroup(pid); err != nil || filepath.Join(lb.mount, cur) != lb.dir {
			continue
		}
		if err := writePID(filepath.Join(lb.mount, orig), pid); err != nil && !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "no such process") {
			errs = append(errs, fmt.Errorf("moving process %d back: %w", pid, err))
		}
	}
	lb.origin = nil
	for _, l := range lb.links {
		if err := l.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	lb.links = nil
	if lb.objs != nil {
		if err := lb.objs.Close(); err != nil {
			errs = append(errs, err)
		}
		lb.objs = nil
	}
	lb.keys = nil
	if lb.dir != "" {
		// Whatever else ended up inside (children of a moved process) goes
		// to the mount's root, or the directory cannot be removed.
		if b, err := os.ReadFile(filepath.Join(lb.dir, "cgroup.procs")); err == nil {
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					_ = writePID(lb.mount, pid)
				}
			}
		}
		var err error
		for try := 0; try < 50; try++ {
			if err = os.Remove(lb.dir); err == nil || errors.Is(err, os.ErrNotExist) {
				err = nil
				break
			}
			time.Sleep(20 * time.Millisecond) // a moved process can take a moment to leave
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("removing cgroup %s: %w", lb.dir, err))
		} else {
			lb.dir = ""
			if err := lab.ReleaseCgroup2(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// CgroupName is the cgroup directory of lab id's socket load balancer.
func CgroupName(id string) string { return lab.Prefix + id + "-svc" }

// CleanCgroup removes what a killed run (lab id) left of the socket load
// balancer: its cgroup directory, after moving anything still inside to
// the cgroup root. Its programs went with the run's file descriptors.
func CleanCgroup(id string) error {
	mount, err := bpfmaps.Cgroup2Mount()
	if err != nil {
		return nil // no cgroup v2: nothing can be left
	}
	lb := &LB{mount: mount, dir: filepath.Join(mount, CgroupName(id))}
	if _, err := os.Stat(lb.dir); err != nil {
		return nil
	}
	return lb.teardownLocked()
}
