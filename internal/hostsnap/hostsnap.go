// Package hostsnap snapshots the host's own network namespace and what
// else a test of cnperf could change on the machine — links, addresses,
// routes (every table), policy rules, the nft ruleset, iptables (legacy
// and nft), net.* sysctls, BPF programs (loaded and attached in the host
// namespace), cnperf's cgroups, the mounts and the files a cluster or
// cnperf's temporary folders could leave (FilePaths) — so that the root test
// suite can be bracketed: the snapshot after must equal the one before.
//
// Docker's own objects are left out (docker0, br-*, veth* of containers,
// DOCKER chains and rules, docker's mounts, the sysctls docker sets) and
// so are values that move by themselves (counters, address lifetimes,
// conntrack counts): the machine runs docker, and the docker backend's
// tests start containers on purpose.
package hostsnap

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Snapshot is each section's lines, normalised and sorted.
type Snapshot map[string][]string

// sections are the commands a snapshot runs; a missing tool is recorded
// as such (the same on both sides).
var sections = []struct {
	name string
	argv []string
}{
	{"links", []string{"ip", "-o", "link", "show"}},
	{"addresses", []string{"ip", "-o", "addr", "show"}},
	{"routes", []string{"ip", "route", "show", "table", "all"}},
	{"routes6", []string{"ip", "-6", "route", "show", "table", "all"}},
	{"rules", []string{"ip", "rule", "show"}},
	{"rules6", []string{"ip", "-6", "rule", "show"}},
	{"nft", []string{"nft", "-s", "list", "ruleset"}},
	{"iptables-legacy", []string{"iptables-legacy-save"}},
	{"iptables-nft", []string{"iptables-nft-save"}},
	{"ip6tables-legacy", []string{"ip6tables-legacy-save"}},
	{"ip6tables-nft", []string{"ip6tables-nft-save"}},
	{"sysctl", []string{"sysctl", "-a", "--pattern", "^net\\."}},
	{"bpf-net", []string{"bpftool", "net", "show"}},
	{"bpf-prog", []string{"bpftool", "prog", "show"}},
}

// Take snapshots the machine now.
func Take() Snapshot {
	s := Snapshot{}
	for _, sec := range sections {
		out, err := exec.Command(sec.argv[0], sec.argv[1:]...).Output()
		if err != nil {
			if _, lerr := exec.LookPath(sec.argv[0]); lerr != nil {
				s[sec.name] = []string{"(no " + sec.argv[0] + ")"}
				continue
			}
		}
		s[sec.name] = Normalize(sec.name, string(out))
	}
	s["cgroups"] = cgroups()
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		s["mounts"] = Normalize("mounts", string(b))
	}
	s["files"] = Files(FilePaths...)
	return s
}

// FilePaths are the places on the host's file system that a Kubernetes
// node or a CNI plugin writes by default, and where cnperf keeps its
// temporary and state folders: the local cluster must leave all of them
// as it found them (issue 34: kubelet wrote /var/lib/kubelet; a killed up
// left /tmp/cnperf-cluster-images*). /var/lib/containerd is Docker's.
var FilePaths = []string{
	"/var/lib/kubelet", "/var/lib/cni", "/var/lib/etcd", "/var/lib/calico", "/var/log/containers", "/var/log/pods",
	"/etc/cni", "/etc/kubernetes", "/run/flannel", "/run/cnperf", "/run/cnperf-cgroup2", "/run/cilium", "/tmp/cnperf*",
}

// Files lists what exists at each of paths (globs allowed), two levels
// below them: "PATH TYPE" (dir, file, link, socket, other).
func Files(paths ...string) []string {
	var out []string
	for _, pat := range paths {
		matches, _ := filepath.Glob(pat)
		for _, root := range matches {
			_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				kind := "other"
				switch t := d.Type(); {
				case t.IsDir():
					kind = "dir"
				case t.IsRegular():
					kind = "file"
				case t&os.ModeSymlink != 0:
					kind = "link"
				case t&os.ModeSocket != 0:
					kind = "socket"
				}
				out = append(out, p+" "+kind)
				if d.IsDir() && strings.Count(strings.TrimPrefix(p, root), "/") >= 2 {
					return filepath.SkipDir
				}
				return nil
			})
		}
	}
	sort.Strings(out)
	return out
}

// cgroups lists cgroup folders named after cnperf, two levels deep in
// every hierarchy (the machine's own services come and go by themselves).
func cgroups() []string {
	var out []string
	for _, pat := range []string{"/sys/fs/cgroup/*", "/sys/fs/cgroup/*/*", "/sys/fs/cgroup/*/*/*"} {
		m, _ := filepath.Glob(pat)
		for _, p := range m {
			if strings.Contains(filepath.Base(p), "cnperf") {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

var (
	// docker's own objects, by name
	dockerish = regexp.MustCompile(`\b(docker0|docker_gwbridge|br-[0-9a-f]{12}|veth[0-9a-f]{7}|DOCKER[A-Z0-9_-]*)\b|/var/lib/docker|/run/docker|containerd`)
	counters  = regexp.MustCompile(`\[\d+:\d+\]|\bpackets \d+ bytes \d+`)
	lifetimes = regexp.MustCompile(`valid_lft \S+ preferred_lft \S+`)
	// the moving parts of a BPF program listing
	progID = regexp.MustCompile(`^\d+: `)
	// sysctls that move by themselves, or that docker sets
	volatile = regexp.MustCompile(`nf_conntrack_count|\.neigh\.veth|\.conf\.veth|\.conf\.docker0|\.neigh\.docker0|\.conf\.br-|\.neigh\.br-|^net\.ipv4\.ip_forward |^net\.ipv6\.conf\.all\.forwarding |^net\.bridge\.|random|boot_id|^net\.core\.netdev_rss_key|\.base_reachable_time|^net\.netfilter\.nf_log\.`)
)

// Normalize turns one section's output into comparable lines: what moves
// by itself removed, docker's objects left out, sorted.
func Normalize(section, out string) []string {
	var lines []string
	switch section {
	case "bpf-prog":
		// one program per "ID: type name NAME ..." line; the lines under
		// it (load time, memory, map ids) move by themselves
		for _, l := range strings.Split(out, "\n") {
			if progID.MatchString(l) {
				f := strings.Fields(progID.ReplaceAllString(l, ""))
				if len(f) > 3 && f[1] == "name" {
					lines = append(lines, f[0]+" "+f[2])
				} else if len(f) > 0 {
					lines = append(lines, f[0])
				}
			}
		}
	case "mounts":
		for _, l := range strings.Split(out, "\n") {
			pre, post, ok := strings.Cut(l, " - ")
			pf, qf := strings.Fields(pre), strings.Fields(post)
			if !ok || len(pf) < 5 || len(qf) < 2 {
				continue
			}
			// /run/netns itself is the bind mount the first `ip netns
			// add` of a boot makes (iproute2, so that namespace mounts
			// propagate); it stays by design, shared by every netns
			// user, so a fresh machine's first lab adds it once. The
			// namespaces under it are still compared.
			if pf[4] == "/run/netns" {
				continue
			}
			// mount point, type, source: not the ids, which change
			lines = append(lines, pf[4]+" "+qf[0]+" "+qf[1])
		}
	default:
		for _, l := range strings.Split(out, "\n") {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			l = counters.ReplaceAllString(l, "")
			l = lifetimes.ReplaceAllString(l, "")
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
	}
	var kept []string
	for _, l := range lines {
		if dockerish.MatchString(l) || (section == "sysctl" && volatile.MatchString(l)) {
			continue
		}
		kept = append(kept, l)
	}
	sort.Strings(kept)
	return kept
}

// Diff lists what differs between two snapshots, one line per change:
// "section: + line" (appeared) or "section: - line" (gone).
func Diff(before, after Snapshot) []string {
	names := map[string]bool{}
	for k := range before {
		names[k] = true
	}
	for k := range after {
		names[k] = true
	}
	var keys []string
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		count := map[string]int{}
		for _, l := range before[k] {
			count[l]--
		}
		for _, l := range after[k] {
			count[l]++
		}
		var ls []string
		for l := range count {
			ls = append(ls, l)
		}
		sort.Strings(ls)
		for _, l := range ls {
			switch n := count[l]; {
			case n > 0:
				out = append(out, fmt.Sprintf("%s: + %s", k, l))
			case n < 0:
				out = append(out, fmt.Sprintf("%s: - %s", k, l))
			}
		}
	}
	return out
}
