package dockerlab

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
)

// An engine is started inside its lab host's network namespace by
//
//	ip netns exec cnperf-ID-hN unshare --uts sh -c SCRIPT
//
// `ip netns exec` gives it a mount namespace of its own whose "/" is a
// slave of the machine's: what it mounts is seen by it and its children
// only, and it sees a sysfs of its own network namespace (so nothing it
// writes under /sys/class/net reaches the machine's interfaces). SCRIPT
// then, before it becomes dockerd:
//
//   - names the UTS namespace after the host (the swarm's node names);
//   - mounts the cgroup hierarchies again, as the machine has them (the
//     fresh sysfs has none, and dockerd and runc need them);
//   - joins the engine's cgroup, cnperf-ID/eN in every hierarchy, so that
//     it and everything it starts (containerd, the shims, docker-proxy) is
//     found and killed by `cnperf clean` even after a kill -9 of cnperf;
//     the containers go under cnperf-ID itself (--cgroup-parent), as
//     deep as a stock engine's /docker/ID;
//   - bind-mounts folders of the engine's own over the places Docker
//     writes to whatever its flags say (/etc/docker: key.json;
//     /var/lib/docker: libnetwork's network/files; /run/docker: plugins;
//     /run/containerd: the shims' sockets), so the machine's own engine
//     and its files are never touched;
//   - and execs dockerd with its data root, exec root, socket, pid file,
//     config file (an empty one of its own, not /etc/docker/daemon.json)
//     and cgroup parent all under the run's folder /run/cnperf/ID/eN. The
//     engine starts its own containerd (under its exec root) and its
//     iptables rules go into the host's namespace only.

// cgroupMount is one cgroup hierarchy of the machine.
type cgroupMount struct {
	Point string // /sys/fs/cgroup/cpu
	Type  string // cgroup or cgroup2
	Opts  string // the v1 controllers and name, "cpu,cpuacct", "name=systemd"
}

// cgroupMounts reads the machine's cgroup hierarchies from a mountinfo
// (lab.ParseCgroupMounts), each v1 hierarchy with its identity.
func cgroupMounts(r io.Reader) []cgroupMount {
	var out []cgroupMount
	for _, lm := range lab.ParseCgroupMounts(r) {
		if len(lm.Options) == 0 {
			continue
		}
		m := cgroupMount{Point: lm.Point, Type: lm.Type}
		if lm.Type == "cgroup" {
			var keep []string
			for _, o := range lm.Options {
				// the hierarchy's identity: its controllers and name; not
				// rw, a release agent or clone_children, which the
				// existing hierarchy keeps
				if o == "rw" || o == "ro" || strings.HasPrefix(o, "release_agent=") || o == "clone_children" {
					continue
				}
				keep = append(keep, o)
			}
			m.Opts = strings.Join(keep, ",")
		}
		out = append(out, m)
	}
	return out
}

// machineCgroupMounts is cgroupMounts of this process's mountinfo.
func machineCgroupMounts() []cgroupMount {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	return cgroupMounts(f)
}

// hide is a folder bind-mounted over a place Docker writes to.
type hide struct {
	Target string // /etc/docker
	Source string // the engine's own folder
}

// hiddenTargets are the machine's Docker folders an engine must not
// write into, whatever its flags: its trust key (/etc/docker/key.json),
// libnetwork's per-sandbox files (/var/lib/docker/network/files), plugin
// sockets (/var/run/docker/plugins) and containerd's shim sockets
// (/run/containerd/s).
var hiddenTargets = []string{"/etc/docker", "/var/lib/docker", "/var/run/docker", "/run/containerd"}

// engineSpec is what one engine is started with.
type engineSpec struct {
	Hostname string
	Dir      string // the engine's state folder
	Cgroups  []cgroupMount
	Cgroup   string // the engine's own cgroup, relative to each root: cnperf-ID/e1
	Hides    []hide
	Dockerd  []string // dockerd's argv
}

// script is the shell the engine starts as, one line: its steps run in
// order, stopping at the first that fails (set -e), the last one exec'ing
// dockerd.
func (s engineSpec) script() string {
	var st []string
	st = append(st, "set -e", "hostname "+shq(s.Hostname))
	tmpfs := false
	for _, m := range s.Cgroups {
		if m.Point != "/sys/fs/cgroup" && !tmpfs && filepath.Dir(m.Point) == "/sys/fs/cgroup" {
			st = append(st, "mount -n -t tmpfs -o mode=755 cgroup /sys/fs/cgroup")
			tmpfs = true
		}
	}
	for _, m := range s.Cgroups {
		st = append(st, "mkdir -p "+shq(m.Point))
		if m.Type == "cgroup2" {
			st = append(st, "mount -n -t cgroup2 cgroup2 "+shq(m.Point))
			continue
		}
		st = append(st, "mount -n -t cgroup -o "+shq(m.Opts)+" cgroup "+shq(m.Point))
	}
	for _, m := range s.Cgroups {
		st = append(st, "echo $$ > "+shq(filepath.Join(m.Point, s.Cgroup, "cgroup.procs")))
	}
	for _, h := range s.Hides {
		st = append(st, "mount -n --bind "+shq(h.Source)+" "+shq(h.Target))
	}
	argv := make([]string, len(s.Dockerd))
	for i, a := range s.Dockerd {
		argv[i] = shq(a)
	}
	st = append(st, "exec "+strings.Join(argv, " "))
	return strings.Join(st, "; ")
}

// argv is the command that starts the engine inside the host's namespace
// (lab.Start puts `ip netns exec NS` before it).
func (s engineSpec) argv() []string {
	return []string{"unshare", "--uts", "sh", "-c", s.script()}
}

// shq quotes s for sh where it needs quoting.
func shq(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-=,:+@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dockerdArgs are an engine's flags.
type dockerdArgs struct {
	Dir           string // state folder
	CgroupParent  string // /cnperf-ID
	Bridge        string // docker0's address, 172.17.1.1/24
	MTU           int
	UserlandProxy bool
}

// Socket is the engine's API socket in its state folder.
func socketOf(dir string) string { return filepath.Join(dir, "docker.sock") }

func (a dockerdArgs) argv() []string {
	return []string{"dockerd",
		"--data-root", filepath.Join(a.Dir, "data"),
		"--exec-root", filepath.Join(a.Dir, "exec"),
		"-H", "unix://" + socketOf(a.Dir),
		"--pidfile", filepath.Join(a.Dir, "dockerd.pid"),
		"--config-file", filepath.Join(a.Dir, "daemon.json"),
		"--cgroup-parent", a.CgroupParent,
		"--exec-opt", "native.cgroupdriver=cgroupfs",
		"--bip", a.Bridge,
		"--mtu", fmt.Sprint(a.MTU),
		fmt.Sprintf("--userland-proxy=%t", a.UserlandProxy),
		"--iptables=true", "--ip-forward=true",
		"--shutdown-timeout", "1",
		"--log-level", "warn",
	}
}
