// Package campaign holds the interrupt campaign: cnperf runs over a mix of
// networks and load balancers, each interrupted at a random moment with a
// random signal, then `cnperf clean`; nothing of a run may be left on the
// machine and no result may be false. Leftovers is the check, here so the
// root test and anyone chasing a leak use the same one.
package campaign

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/svc/bpfmaps"
)

// ProgramNames are the names of the BPF programs cnperf loads (netmode
// ebpf, svc ebpf-socket and ebpf-tc).
var ProgramNames = []string{"from_container", "from_netdev", "cnperf_connect4", "cnperf_sendmsg4",
	"cnperf_recvmsg4", "cnperf_tc_egress", "cnperf_tc_ingress"}

// Leftovers lists what run id (its first lab and the labs beside it) left
// on the machine: namespaces, state folders, processes started for it
// (they carry CNPERF_RUN_ID=id or name its state folder), cgroups, pinned
// BPF objects, files in the temporary folder; and anything of cnperf's in
// the host's own namespace: BPF programs attached there, iptables or nft
// rules naming cnperf. A BPF program of a run can only outlive it held by
// a process, a pin, a cgroup or an attachment in the host namespace, each
// looked for here; the ones attached inside its namespaces went with them.
func Leftovers(id string) []string {
	var left []string
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		labID, _, _ := strings.Cut(strings.TrimPrefix(e.Name(), lab.Prefix), "-")
		if strings.HasPrefix(e.Name(), lab.Prefix) && lab.OfRun(labID, id) {
			left = append(left, "namespace "+e.Name())
		}
	}
	dirs, _ := os.ReadDir(lab.StateRoot)
	for _, d := range dirs {
		if lab.OfRun(d.Name(), id) {
			left = append(left, "state folder "+filepath.Join(lab.StateRoot, d.Name()))
		}
	}
	left = append(left, processes(id)...)
	left = append(left, cgroups(id)...)
	if ents, err := os.ReadDir("/sys/fs/bpf"); err == nil {
		for _, e := range ents {
			if strings.Contains(strings.ToLower(e.Name()), "cnperf") {
				left = append(left, "pinned BPF object /sys/fs/bpf/"+e.Name())
			}
		}
	}
	if ents, err := os.ReadDir(os.TempDir()); err == nil {
		for _, e := range ents {
			if strings.Contains(e.Name(), id) {
				left = append(left, "temporary file "+filepath.Join(os.TempDir(), e.Name()))
			}
		}
	}
	return append(left, HostNamespace()...)
}

// processes are those started for run id: its id in their environment or
// its state folder on their command line.
func processes(id string) []string {
	var left []string
	self := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' || pid == strconv.Itoa(self) {
			continue
		}
		env, _ := os.ReadFile("/proc/" + pid + "/environ")
		cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		mine := false
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := strings.CutPrefix(string(kv), "CNPERF_RUN_ID="); ok && lab.OfRun(v, id) {
				mine = true
			}
		}
		for _, arg := range strings.Split(string(cmd), "\x00") {
			if i := strings.Index(arg, lab.StateRoot+"/"); i >= 0 {
				rest := arg[i+len(lab.StateRoot)+1:]
				dir, _, _ := strings.Cut(rest, "/")
				if lab.OfRun(dir, id) {
					mine = true
				}
			}
		}
		if mine {
			left = append(left, "process "+pid+" ("+strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " ")+")")
		}
	}
	return left
}

// cgroups named after run id's labs, in the cgroup v2 hierarchy and every
// v1 one.
func cgroups(id string) []string {
	var roots []string
	if m, err := bpfmaps.Cgroup2Mount(); err == nil {
		roots = append(roots, m)
	}
	if ents, err := os.ReadDir("/sys/fs/cgroup"); err == nil {
		for _, e := range ents {
			roots = append(roots, filepath.Join("/sys/fs/cgroup", e.Name()))
		}
	}
	var left []string
	seen := map[string]bool{}
	for _, r := range roots {
		ents, _ := os.ReadDir(r)
		for _, e := range ents {
			name, ok := strings.CutPrefix(e.Name(), lab.Prefix)
			labID, _, _ := strings.Cut(name, "-")
			p := filepath.Join(r, e.Name())
			if ok && e.IsDir() && lab.OfRun(labID, id) && !seen[p] {
				seen[p] = true
				left = append(left, "cgroup "+p)
			}
		}
	}
	return left
}

// HostNamespace lists what of cnperf is in the host's own network
// namespace, where cnperf must never put anything: its BPF programs
// attached to a host interface (bpftool net), iptables (legacy and nft)
// and nft rules naming cnperf. Tools the machine lacks are passed over.
func HostNamespace() []string {
	var left []string
	if out, err := exec.Command("bpftool", "net", "show").Output(); err == nil {
		for _, name := range ProgramNames {
			if bytes.Contains(out, []byte(name)) {
				left = append(left, "BPF program "+name+" attached in the host namespace")
			}
		}
	}
	for _, c := range [][]string{{"iptables-legacy-save"}, {"iptables-nft-save"}, {"iptables-save"}, {"nft", "list", "ruleset"}} {
		out, err := exec.Command(c[0], c[1:]...).Output()
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(strings.ToLower(line), "cnperf") {
				left = append(left, c[0]+" in the host namespace: "+strings.TrimSpace(line))
			}
		}
	}
	return left
}
