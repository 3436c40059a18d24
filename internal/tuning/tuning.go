// Package tuning applies a host-tuning profile inside a lab's network
// namespaces: seed 000's setup ("To minimize the influence of
// nf_conntrack, NOTRACK rules were added. Sysctls was tuned to support
// large number of tcp connections", RPS and RFS on the NIC's queues), as
// far as it can be done without touching the host's own namespace. Every
// per-namespace sysctl is set in each of the lab's namespaces; NOTRACK
// rules go into every namespace whose netfilter rules do not need
// conntrack (NAT, stateful matches); rps_cpus and rps_flow_cnt are written
// to every receive queue of every device in the lab. What the study set
// host-wide (fs.file-max, net.core.rps_sock_flow_entries, the scheduler,
// IRQ affinity) is never changed: it is recorded as not applied, with why.
package tuning

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/registry"
	"github.com/cnperf/cnperf/internal/result"
	"golang.org/x/sys/unix"
)

// None is the profile that changes nothing: the lab as it is built.
const None = "none"

// Profile is a named set of tunings.
type Profile struct {
	Name    string
	Summary string
	// Sysctls are set in every namespace of the lab; each must be a net.*
	// key (the network sysctls a namespace has of its own).
	Sysctls [][2]string
	// NoTrack adds raw-table NOTRACK rules (PREROUTING, OUTPUT).
	NoTrack bool
	// RPSFlowCnt, when set, turns RPS on (every CPU) with this many flow
	// entries per receive queue (RFS's per-queue table).
	RPSFlowCnt int
	// HostWide is what the source set that is not the namespace's own,
	// with why cnperf leaves it alone.
	HostWide []string
}

// Study is seed 000's setup (the Kubernetes network comparison): its
// sysctls for many connections, NOTRACK, RPS and RFS.
var Study = Profile{
	Name:    "study",
	Summary: "seed 000's host tuning inside the lab: NOTRACK, RPS/RFS on every device, sysctls for many connections",
	Sysctls: [][2]string{
		{"net.ipv4.ip_local_port_range", "2000 65535"},
		{"net.ipv4.tcp_max_tw_buckets", "2000000"},
		{"net.ipv4.tcp_tw_reuse", "1"},
		{"net.ipv4.tcp_fin_timeout", "10"},
		{"net.ipv4.tcp_slow_start_after_idle", "0"},
		// not in the study's list, but what its 60k connections and
		// nginx's backlog of 65535 need: the listen queues
		{"net.core.somaxconn", "65535"},
		{"net.ipv4.tcp_max_syn_backlog", "65535"},
	},
	NoTrack:    true,
	RPSFlowCnt: 32768,
	HostWide: []string{
		"fs.file-max=1024000: kernel-wide, not a namespace's (cnperf's agents raise their own open-file limit)",
		"net.ipv4.tcp_tw_recycle=1: removed from Linux in 4.12",
		"net.ipv4.tcp_low_latency=1: a no-op since Linux 4.14, since removed",
		"net.core.rps_sock_flow_entries=65536: kernel-wide; without it RFS steers nothing, so the rps_flow_cnt set on each queue is inert unless the host's value (recorded in sysctls) is above 0",
		"kernel.sched_migration_cost_ns=10000000: the host's scheduler",
		"IRQ affinity (/proc/irq/N/smp_affinity_list): the lab's devices are virtual, they have no IRQ",
		"XPS (xps_cpus): a veth transmits on the sending CPU, there is no queue to map",
		"tuned network-latency: cnperf holds the PM QoS CPU latency bound itself (--cpu-latency, recorded as cpu_latency_us)",
	},
}

// Parts are the study's profile one part at a time, to see which of them
// makes a difference: --tuning none,study-sysctls,study-notrack,study-rps,study.
var Parts = []Profile{
	{Name: "study-sysctls", Summary: "the study's sysctls only", Sysctls: Study.Sysctls, HostWide: Study.HostWide},
	{Name: "study-notrack", Summary: "the study's NOTRACK rules only", NoTrack: true, HostWide: Study.HostWide},
	{Name: "study-rps", Summary: "the study's RPS/RFS only", RPSFlowCnt: Study.RPSFlowCnt, HostWide: Study.HostWide},
}

var profiles = func() map[string]Profile {
	m := map[string]Profile{None: {Name: None, Summary: "the lab as built, untuned"}, Study.Name: Study}
	for _, p := range Parts {
		m[p.Name] = p
	}
	return m
}()

// Names lists the profiles.
func Names() []string {
	out := make([]string, 0, len(profiles))
	for n := range profiles {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Get finds a profile by name.
func Get(name string) (Profile, error) {
	if p, ok := profiles[name]; ok {
		return p, nil
	}
	return Profile{}, fmt.Errorf("unknown tuning %q;%s use one of %s, or several comma-separated to measure each (none,study)", name, registry.Suggest(name, Names()), strings.Join(Names(), ", "))
}

// ParseList reads --tuning: profile names, comma-separated, each once.
func ParseList(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("--tuning %q names an empty profile; use e.g. --tuning study or --tuning none,study", s)
		}
		if _, err := Get(f); err != nil {
			return nil, err
		}
		if slices.Contains(out, f) {
			return nil, fmt.Errorf("--tuning %q names %s twice; name each profile once, e.g. --tuning none,study", s, f)
		}
		out = append(out, f)
	}
	return out, nil
}

// Label is the step suffix of results measured with profile name.
func Label(name string) string { return "tuning=" + name }

// StepOf splits a result's step into the step without the tuning and the
// profile ("" when untagged).
func StepOf(step string) (rest, profile string) {
	var keep []string
	for _, f := range strings.Fields(step) {
		if v, ok := strings.CutPrefix(f, "tuning="); ok {
			profile = v
			continue
		}
		keep = append(keep, f)
	}
	return strings.Join(keep, " "), profile
}

// WithProfile replaces (or adds) the tuning of a step.
func WithProfile(step, profile string) string {
	rest, _ := StepOf(step)
	if rest == "" {
		return Label(profile)
	}
	return rest + " " + Label(profile)
}

// Runner runs a command inside a namespace (the lab's In).
type Runner interface {
	In(ctx context.Context, ns string, argv ...string) ([]byte, error)
}

// Apply tunes every namespace of l with p and returns what it did.
func Apply(ctx context.Context, l *lab.Lab, p Profile) (result.Tuning, error) {
	return ApplyTo(ctx, l, l.Namespaces(), p)
}

// ApplyTo tunes namespaces nss with p, through r.
func ApplyTo(ctx context.Context, r Runner, nss []string, p Profile) (result.Tuning, error) {
	rec := result.Tuning{Profile: p.Name, Labs: 1, NotApplied: append([]string(nil), p.HostWide...)}
	if p.Name == None || len(nss) == 0 {
		return rec, nil
	}
	// a net.* sysctl a namespace has is that namespace's own: the kernel
	// shows a new namespace only the network sysctls it keeps per
	// namespace (the others live in the host's alone)
	rec.Sysctls = map[string]string{}
	var set []string
	for _, kv := range p.Sysctls {
		k, v := kv[0], kv[1]
		if !strings.HasPrefix(k, "net.") {
			return rec, fmt.Errorf("tuning %s: %s is not a network sysctl; only net.* keys are a namespace's own", p.Name, k)
		}
		if _, err := r.In(ctx, nss[0], "sysctl", "-n", k); err != nil {
			rec.NotApplied = append(rec.NotApplied, k+"="+v+": not a per-namespace sysctl on this kernel (the host's, left alone)")
			continue
		}
		rec.Sysctls[k] = v
		set = append(set, k+"="+v)
	}
	mask := ""
	if p.RPSFlowCnt > 0 {
		var err error
		if mask, err = cpuMask(); err != nil {
			return rec, err
		}
		rec.RPSCPUs, rec.RPSFlowCnt = mask, p.RPSFlowCnt
	}
	for _, ns := range nss {
		rec.Namespaces++
		if len(set) > 0 {
			if out, err := r.In(ctx, ns, append([]string{"sysctl", "-q", "-w"}, set...)...); err != nil {
				return rec, fmt.Errorf("tuning %s in %s: %v %s", ns, p.Name, err, strings.TrimSpace(string(out)))
			}
		}
		if p.NoTrack {
			why, err := needsConntrack(ctx, r, ns)
			if err != nil {
				return rec, err
			}
			if why != "" {
				rec.ConntrackKept = append(rec.ConntrackKept, ns+": "+why)
			} else {
				for _, chain := range []string{"PREROUTING", "OUTPUT"} {
					if out, err := r.In(ctx, ns, "iptables", "-w", "-t", "raw", "-A", chain, "-j", "NOTRACK"); err != nil {
						return rec, fmt.Errorf("NOTRACK in %s: %v %s", ns, err, strings.TrimSpace(string(out)))
					}
				}
				rec.NoTrack++
			}
		}
		if mask != "" {
			n, err := setRPS(ctx, r, ns, mask, p.RPSFlowCnt)
			if err != nil {
				return rec, err
			}
			rec.RPSDevices += n
		}
	}
	if p.NoTrack && rec.NoTrack == 0 {
		rec.NotApplied = append(rec.NotApplied, "NOTRACK: every namespace has netfilter rules that need conntrack")
	}
	if mask != "" && rec.RPSDevices == 0 {
		rec.NotApplied = append(rec.NotApplied, "RPS/RFS: no device has a receive queue to set (a kernel without CONFIG_RPS)")
	}
	return rec, nil
}

// conntrackRule finds what in a namespace's netfilter rules needs
// conntrack: address translation and stateful matches.
var conntrackRule = regexp.MustCompile(`(?i)(\b(masquerade|dnat|snat|redirect|ctstate|conntrack|ct state|ct status)\b|--state\b)`)

// needsConntrack says why ns must keep conntrack ("" when it need not):
// its iptables (nft or legacy) or nft rules translate addresses or match
// on connection state, which NOTRACK would break.
func needsConntrack(ctx context.Context, r Runner, ns string) (string, error) {
	for _, argv := range [][]string{{"iptables-save"}, {"iptables-legacy-save"}, {"nft", "list", "ruleset"}} {
		out, err := r.In(ctx, ns, argv...)
		if err != nil {
			continue // the tool is not here: it holds no rules
		}
		for _, line := range strings.Split(string(out), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") {
				continue
			}
			if conntrackRule.MatchString(line) {
				return fmt.Sprintf("its rules need conntrack (%s: %q)", argv[0], line), nil
			}
		}
	}
	return "", nil
}

// setRPS writes mask and flow entries to every receive queue of every
// device in ns but lo; it returns how many devices it set.
func setRPS(ctx context.Context, r Runner, ns, mask string, flows int) (int, error) {
	script := fmt.Sprintf(`for q in /sys/class/net/*/queues/rx-*; do
  [ -e "$q/rps_cpus" ] || continue
  case "$q" in /sys/class/net/lo/*) continue;; esac
  echo %s > "$q/rps_cpus" && echo %d > "$q/rps_flow_cnt" && echo "${q%%/queues/*}"
done`, mask, flows)
	out, err := r.In(ctx, ns, "sh", "-c", script)
	if err != nil {
		return 0, fmt.Errorf("RPS in %s: %v %s", ns, err, strings.TrimSpace(string(out)))
	}
	devs := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		devs[l] = true
	}
	return len(devs), nil
}

// cpuMask is the CPUs cnperf may run on as an rps_cpus mask: hex, in
// comma-separated 32-bit groups, most significant first.
func cpuMask() (string, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return "", fmt.Errorf("reading the CPUs: %w", err)
	}
	var cpus []int
	for i := 0; i < 1024; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return Mask(cpus), nil
}

// Mask renders CPUs as an rps_cpus mask ("3" for 0,1; "1,00000000" for 32).
func Mask(cpus []int) string {
	if len(cpus) == 0 {
		return "0"
	}
	groups := make([]uint32, slices.Max(cpus)/32+1)
	for _, c := range cpus {
		groups[c/32] |= 1 << (c % 32)
	}
	var parts []string
	for i := len(groups) - 1; i >= 0; i-- {
		if i == len(groups)-1 {
			parts = append(parts, strconv.FormatUint(uint64(groups[i]), 16))
		} else {
			parts = append(parts, fmt.Sprintf("%08x", groups[i]))
		}
	}
	return strings.Join(parts, ",")
}

// Merge adds one lab's record to the run's records (one per profile).
func Merge(recs []result.Tuning, t result.Tuning) []result.Tuning {
	for i := range recs {
		r := &recs[i]
		if r.Profile != t.Profile {
			continue
		}
		r.Labs += t.Labs
		r.Namespaces += t.Namespaces
		r.NoTrack += t.NoTrack
		r.RPSDevices += t.RPSDevices
		r.ConntrackKept = append(r.ConntrackKept, t.ConntrackKept...)
		for _, n := range t.NotApplied {
			if !slices.Contains(r.NotApplied, n) {
				r.NotApplied = append(r.NotApplied, n)
			}
		}
		return recs
	}
	return append(recs, t)
}
