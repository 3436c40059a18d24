package neighbours

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
)

// hierarchy is one mounted cgroup hierarchy a neighbour's cgroup is made
// in: cgroup v1's cpu and cpuacct controllers where mounted (the CPU
// controller itself), else the cgroup v2 mount.
type hierarchy struct {
	mount       string
	controllers []string // v1: the mount's controllers; v2: nil
	usage       string   // the file its CPU time is read from, "" for none
}

// hierarchies finds where a neighbour's CPU cgroup goes on this machine.
func hierarchies() ([]hierarchy, error) {
	var v1 []hierarchy
	var v2 *hierarchy
	for _, m := range lab.CgroupMounts() {
		if len(m.Options) == 0 {
			continue
		}
		switch m.Type {
		case "cgroup2":
			if v2 == nil {
				v2 = &hierarchy{mount: m.Point, usage: "cpu.stat"}
			}
		case "cgroup":
			var ctls []string
			for _, o := range m.Options {
				if o == "cpu" || o == "cpuacct" {
					ctls = append(ctls, o)
				}
			}
			if len(ctls) == 0 {
				continue
			}
			h := hierarchy{mount: m.Point, controllers: ctls}
			for _, c := range ctls {
				if c == "cpuacct" {
					h.usage = "cpuacct.usage"
				}
			}
			v1 = append(v1, h)
		}
	}
	if len(v1) > 0 {
		return v1, nil
	}
	if v2 != nil {
		return []hierarchy{*v2}, nil
	}
	return nil, errors.New("no cgroup mount with a CPU controller; noisy neighbours need one (mount -t cgroup2 none /sys/fs/cgroup)")
}

// CgroupName is the cgroup of lab id's neighbour pod.
func CgroupName(id, pod string) string { return lab.Prefix + id + "-" + pod }

// cgroup is one neighbour's CPU cgroup, in every hierarchy.
type cgroup struct {
	hs     []hierarchy
	dirs   []string
	origin map[int][]string // pid -> its cgroup in each hierarchy before
}

// newCgroup makes the cgroup named name in each hierarchy.
func newCgroup(hs []hierarchy, name string) (*cgroup, error) {
	cg := &cgroup{hs: hs, origin: map[int][]string{}}
	for _, h := range hs {
		dir := filepath.Join(h.mount, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			_ = cg.remove()
			return nil, fmt.Errorf("creating cgroup %s: %w", dir, err)
		}
		cg.dirs = append(cg.dirs, dir)
	}
	return cg, nil
}

// add moves pid (all its threads) into the cgroup.
func (cg *cgroup) add(pid int) error {
	var orig []string
	for i, h := range cg.hs {
		o, err := procCgroup(pid, h)
		if err != nil {
			return err
		}
		orig = append(orig, o)
		if err := writePID(cg.dirs[i], pid); err != nil {
			return fmt.Errorf("moving process %d into %s: %w", pid, cg.dirs[i], err)
		}
	}
	cg.origin[pid] = orig
	return nil
}

// cpu is the CPU time the cgroup's processes have used so far.
func (cg *cgroup) cpu() (time.Duration, bool) {
	for i, h := range cg.hs {
		if h.usage == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(cg.dirs[i], h.usage))
		if err != nil {
			return 0, false
		}
		return parseUsage(h.usage, string(b))
	}
	return 0, false
}

// parseUsage reads cpuacct.usage (ns) or cpu.stat's usage_usec.
func parseUsage(file, text string) (time.Duration, bool) {
	if file == "cpuacct.usage" {
		v, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		return time.Duration(v), err == nil
	}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "usage_usec" {
			v, err := strconv.ParseInt(f[1], 10, 64)
			return time.Duration(v) * time.Microsecond, err == nil
		}
	}
	return 0, false
}

// remove moves every process back where it was (anything else inside to
// the hierarchy's root) and removes the cgroup's directories.
func (cg *cgroup) remove() error {
	var errs []error
	for pid, orig := range cg.origin {
		for i, h := range cg.hs {
			if cur, err := procCgroup(pid, h); err != nil || filepath.Join(h.mount, cur) != cg.dirs[i] {
				continue // gone, or no longer ours
			}
			_ = writePID(filepath.Join(h.mount, orig[i]), pid)
		}
	}
	cg.origin = map[int][]string{}
	for i, dir := range cg.dirs {
		if err := removeDir(dir, cg.hs[i].mount); err != nil {
			errs = append(errs, err)
		}
	}
	cg.dirs = nil
	return errors.Join(errs...)
}

func removeDir(dir, mount string) error {
	if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil {
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = writePID(mount, pid)
			}
		}
	}
	var err error
	for try := 0; try < 50; try++ {
		if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond) // a moved process can take a moment to leave
	}
	return fmt.Errorf("removing cgroup %s: %w", dir, err)
}

func writePID(dir string, pid int) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

// procCgroup is pid's cgroup in hierarchy h, relative to its mount.
func procCgroup(pid int, h hierarchy) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", err
	}
	return cgroupOf(string(b), h)
}

func cgroupOf(text string, h hierarchy) (string, error) {
	for _, line := range strings.Split(text, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if h.controllers == nil {
			if f[0] == "0" && f[1] == "" {
				return f[2], nil
			}
			continue
		}
		ctls := strings.Split(f[1], ",")
		if len(ctls) == len(h.controllers) && strings.Contains(","+f[1]+",", ","+h.controllers[0]+",") {
			return f[2], nil
		}
	}
	return "", fmt.Errorf("no cgroup of %v in %q", h.controllers, text)
}

// CleanCgroups removes what a killed run (lab id) left of its neighbours'
// cgroups.
func CleanCgroups(id string) error {
	hs, err := hierarchies()
	if err != nil {
		return nil // no cgroups: nothing can be left
	}
	var errs []error
	for _, h := range hs {
		dirs, _ := filepath.Glob(filepath.Join(h.mount, CgroupName(id, "nb*")))
		for _, d := range dirs {
			if err := removeDir(d, h.mount); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
