package lab

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Cgroup2Dir is where cnperf mounts the cgroup v2 hierarchy on a machine
// that has none mounted (a cgroup v1 host): eBPF programs that attach to
// cgroups (Cilium's socket load balancing, real or replica) need a v2
// directory. Every controller stays bound to v1, so the mount changes
// nothing for the host's processes: they all sit at the v2 root, where
// cnperf never attaches anything; it attaches only to cnperf-* directories
// holding the processes it moved there or started there.
var Cgroup2Dir = "/run/cnperf-cgroup2"

// EnsureCgroup2 returns the mount point of the cgroup v2 hierarchy: the
// machine's own where one is mounted, else Cgroup2Dir, mounted now (and
// left for ReleaseCgroup2).
//
//	mkdir -p /run/cnperf-cgroup2 && mount -t cgroup2 cgroup2 /run/cnperf-cgroup2
func EnsureCgroup2() (string, error) {
	if m := Cgroup2Mount(); m != "" {
		return m, nil
	}
	if err := os.MkdirAll(Cgroup2Dir, 0o755); err != nil {
		return "", fmt.Errorf("cgroup v2 mount point: %w", err)
	}
	if err := syscall.Mount("cgroup2", Cgroup2Dir, "cgroup2", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		_ = os.Remove(Cgroup2Dir)
		return "", fmt.Errorf("mounting the cgroup v2 hierarchy at %s: %w (the kernel needs CONFIG_CGROUPS with cgroup2)", Cgroup2Dir, err)
	}
	return Cgroup2Dir, nil
}

// ReleaseCgroup2 unmounts Cgroup2Dir once no cnperf-* cgroup is left in
// it, and removes the folder; the machine's own v2 mount is never
// touched. Harmless when nothing is mounted there.
//
//	umount /run/cnperf-cgroup2 && rmdir /run/cnperf-cgroup2
func ReleaseCgroup2() error {
	if !mountedAt(Cgroup2Dir) {
		_ = os.Remove(Cgroup2Dir) // a folder left by a mount that failed
		return nil
	}
	ents, err := os.ReadDir(Cgroup2Dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), Prefix) {
			return nil // another run's cgroups still there
		}
	}
	if err := syscall.Unmount(Cgroup2Dir, 0); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("unmounting %s: %w", Cgroup2Dir, err)
	}
	if err := os.Remove(Cgroup2Dir); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// mountedAt says whether a cgroup2 file system is mounted at dir.
func mountedAt(dir string) bool {
	for _, m := range CgroupMounts() {
		if m.Point == dir && m.Type == "cgroup2" {
			return true
		}
	}
	return false
}
