package lab

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RunCgroup is the name of the cgroup a run may hold processes in, at the
// root of every hierarchy: cnperf-<id>. The local Kubernetes cluster
// (`cnperf cluster`, package kubelocal, run id "kube") puts its control plane, its
// kubelets and their pods under it; Clean kills and removes what a dead
// run left there.
func RunCgroup(id string) string { return Prefix + id }

// CgroupMount is one cgroup hierarchy of the machine.
type CgroupMount struct {
	Point string // /sys/fs/cgroup/cpu
	Type  string // cgroup (v1) or cgroup2
	// Options are the mount's super options: a v1 hierarchy's controllers
	// and name ("cpu", "cpuacct", "name=systemd") among rw and the like.
	Options []string
}

// ParseCgroupMounts reads the cgroup hierarchies of a mountinfo text
// (/proc/PID/mountinfo), each mount point once, in their order.
func ParseCgroupMounts(r io.Reader) []CgroupMount {
	var out []CgroupMount
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, t := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(t) == 0 || (t[0] != "cgroup" && t[0] != "cgroup2") || seen[f[4]] {
			continue
		}
		seen[f[4]] = true
		m := CgroupMount{Point: f[4], Type: t[0]}
		if len(t) >= 3 {
			m.Options = strings.Split(t[2], ",")
		}
		out = append(out, m)
	}
	return out
}

// CgroupMounts are this machine's cgroup hierarchies, v1 and v2, as this
// process sees them. It is the one reader of cgroup mounts of cnperf.
func CgroupMounts() []CgroupMount {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	return ParseCgroupMounts(f)
}

// Cgroup2Mount is where the cgroup v2 hierarchy is mounted, "" when it is
// not.
func Cgroup2Mount() string {
	for _, m := range CgroupMounts() {
		if m.Type == "cgroup2" {
			return m.Point
		}
	}
	return ""
}

// cgroupRoots lists the mount points of the cgroup hierarchies, v1 and v2.
func cgroupRoots() []string {
	var roots []string
	for _, m := range CgroupMounts() {
		roots = append(roots, m.Point)
	}
	return roots
}

// runCgroupDirs lists the existing cnperf-<id> cgroups, one per hierarchy.
func runCgroupDirs(id string) []string {
	var dirs []string
	for _, r := range cgroupRoots() {
		d := filepath.Join(r, RunCgroup(id))
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// cgroupPIDs lists every process in the subtrees under dirs.
func cgroupPIDs(dirs []string) []int {
	seen := map[int]bool{}
	var pids []int
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || e.Name() != "cgroup.procs" {
				return nil
			}
			b, _ := os.ReadFile(p)
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] && pid != os.Getpid() {
					seen[pid] = true
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return pids
}

// cgroupTasks lists every thread in the subtrees under dirs: a v1
// hierarchy's "tasks", a v2 one's "cgroup.threads". A process whose
// first thread has exited while others still run is gone from
// cgroup.procs, not from these: only when they are empty has every
// process really exited (its files, sockets and mounts released).
func cgroupTasks(dirs []string) []int {
	var tids []int
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || (e.Name() != "tasks" && e.Name() != "cgroup.threads") {
				return nil
			}
			b, _ := os.ReadFile(p)
			for _, f := range strings.Fields(string(b)) {
				if tid, err := strconv.Atoi(f); err == nil {
					tids = append(tids, tid)
				}
			}
			return nil
		})
	}
	return tids
}

// removeRunCgroups kills every process in run id's cgroups and removes
// them, deepest first.
func removeRunCgroups(id string) error { return StopRunCgroup(id, 0, 2*time.Second) }

// StopRunCgroup ends every process under run id's cgroups and removes
// them, deepest first. With a grace period the processes get SIGTERM
// first and that long to exit on their own; then SIGKILL, repeated (a
// process may fork meanwhile) until no thread is left in any of them. It
// returns only once they have all exited, or fails naming those still
// there after limit, leaving the cgroups for another try.
func StopRunCgroup(id string, grace, limit time.Duration) error {
	dirs := runCgroupDirs(id)
	if len(dirs) == 0 {
		return nil
	}
	empty := func() bool { return len(cgroupPIDs(dirs)) == 0 && len(cgroupTasks(dirs)) == 0 }
	if grace > 0 {
		for _, pid := range cgroupPIDs(dirs) {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
		for end := time.Now().Add(grace); !empty() && time.Now().Before(end); {
			time.Sleep(50 * time.Millisecond)
		}
	}
	for end := time.Now().Add(limit); !empty(); {
		if time.Now().After(end) {
			return fmt.Errorf("processes still in cgroup %s %v after SIGKILL: %s", RunCgroup(id), limit, describePIDs(append(cgroupPIDs(dirs), cgroupTasks(dirs)...)))
		}
		for _, pid := range append(cgroupPIDs(dirs), cgroupTasks(dirs)...) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var errs []error
	for _, d := range dirs {
		var sub []string
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				sub = append(sub, p)
			}
			return nil
		})
		sort.Slice(sub, func(i, j int) bool { return len(sub[i]) > len(sub[j]) })
		for _, s := range sub {
			if err := syscall.Rmdir(s); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", s, err))
			}
		}
	}
	return errors.Join(errs...)
}

// describePIDs names processes for a message: "812 (kube-apiserver), ...".
func describePIDs(pids []int) string {
	seen := map[int]bool{}
	var out []string
	for _, pid := range pids {
		if seen[pid] {
			continue
		}
		seen[pid] = true
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		out = append(out, fmt.Sprintf("%d (%s)", pid, strings.TrimSpace(string(comm))))
		if len(out) == 10 {
			out = append(out, "...")
			break
		}
	}
	return strings.Join(out, ", ")
}

// MakeCgroup creates cgroup rel (a path under each hierarchy's root, such
// as RunCgroup(id)+"/n1") in every hierarchy, with its parents, and
// returns the folders. A v1 cpuset gets its parent's CPUs and memory
// nodes, without which it takes no process.
func MakeCgroup(rel string) ([]string, error) {
	var dirs []string
	for _, root := range cgroupRoots() {
		parts := strings.Split(strings.Trim(rel, "/"), "/")
		for i := range parts {
			d := filepath.Join(root, filepath.Join(parts[:i+1]...))
			if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
				return nil, fmt.Errorf("cgroup %s: %w", d, err)
			}
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				cur, err := os.ReadFile(filepath.Join(d, f))
				if err != nil || strings.TrimSpace(string(cur)) != "" {
					continue
				}
				v, err := os.ReadFile(filepath.Join(filepath.Dir(d), f))
				if err != nil {
					return nil, err
				}
				if err := os.WriteFile(filepath.Join(d, f), v, 0o644); err != nil {
					return nil, fmt.Errorf("cgroup %s: %w", filepath.Join(d, f), err)
				}
			}
		}
		dirs = append(dirs, filepath.Join(root, rel))
	}
	return dirs, nil
}

// leftoverCgroupIDs lists the run ids that have a cnperf-<id> cgroup.
func leftoverCgroupIDs() []string {
	seen := map[string]bool{}
	var ids []string
	for _, r := range cgroupRoots() {
		ents, _ := os.ReadDir(r)
		for _, e := range ents {
			id, ok := strings.CutPrefix(e.Name(), Prefix)
			if !ok || !e.IsDir() || !validID(id) || seen[id] {
				continue
			}
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// CgroupRoots lists the mount points of this machine's cgroup hierarchies
// (each v1 controller's, or the v2 root), for a caller that puts processes
// under RunCgroup itself (the docker-lab engines).
func CgroupRoots() []string { return cgroupRoots() }

// RemoveRunCgroup kills every process under run id's cgroups, RunCgroup(id)
// in every hierarchy, and removes them, deepest first: what a teardown does
// before deleting the namespaces those processes may hold.
func RemoveRunCgroup(id string) error { return removeRunCgroups(id) }
