package runner

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

// StartupName is the start-up time measurement. It is not an agent
// workload: the runner itself creates pods in a built network and times
// each from "create" to the first reply from a peer (the paper's "from the
// create command to the first ping reply"), so it is registered as a
// workload only to be listed and validated.
const StartupName = "startup"

// DefaultStartupRepeat is how many pods a startup measurement creates when
// --repeat is not given (the paper's mean of 10).
const DefaultStartupRepeat = 10

// startupProbeLimit bounds the wait for a new pod's first reply.
const startupProbeLimit = 15 * time.Second

func init() { workload.Register(startupWorkload{}) }

type startupWorkload struct{}

func (startupWorkload) Name() string { return StartupName }
func (startupWorkload) Summary() string {
	return "network start-up time: create a pod, time to the first ping reply from a peer (--repeat N, default 10), per phase"
}
func (startupWorkload) Proto() string { return "icmp" }

// Figures: the mean create-to-first-reply time (with its ratio to the
// baseline) and its p95, in milliseconds.
func (startupWorkload) Figures() []result.Figure {
	return []result.Figure{
		{Key: "startup_ms.mean", Label: "ms", Unit: "ms", Better: result.LowerBetter, Kind: result.KindTime, Ratio: true},
		{Key: "startup_ms.p95", Label: "p95 ms", Unit: "ms", Better: result.LowerBetter, Kind: result.KindTime},
	}
}
func (startupWorkload) Defaults(p *workload.Params) {
	if p.Duration == 0 {
		p.Duration = time.Second
	}
}
func (startupWorkload) Validate(workload.Params) error { return nil }

var errLabLevel = errors.New("startup is measured by the runner, not inside an agent")

func (startupWorkload) Serve(context.Context, workload.Params, func()) (workload.Report, error) {
	return workload.Report{}, errLabLevel
}
func (startupWorkload) Run(context.Context, workload.Params, netip.AddrPort) (workload.Report, error) {
	return workload.Report{}, errLabLevel
}
func (startupWorkload) Metrics(workload.Params, workload.Report, workload.Report) (result.Metrics, string, error) {
	return result.Metrics{}, "", errLabLevel
}

// phaseMark is one netmode.MarkPhase call.
type phaseMark struct {
	phase string
	at    time.Time
}

var standardPhases = []string{netmode.PhaseNamespace, netmode.PhaseLinks, netmode.PhaseControlPlane}

// splitPhases turns the marks of one AddPod (started at t0, returned at
// added) and the first reply (at first, zero when there is no peer) into
// the time of each phase. Time after the last mark belongs to the standard
// phase that follows it: a mode that marks nothing spends it all in
// "links", one that marks only "namespace" spends the rest in "links"; a
// remainder under 100us stays with the last marked phase.
func splitPhases(t0, added, first time.Time, marks []phaseMark) map[string]time.Duration {
	out := map[string]time.Duration{}
	prev := t0
	next := 1 // index in standardPhases of the phase the remainder goes to
	for _, m := range marks {
		out[m.phase] += m.at.Sub(prev)
		prev = m.at
		switch m.phase {
		case netmode.PhaseNamespace:
			next = 1
		case netmode.PhaseLinks:
			next = 2
		default:
			next = 2 // control-plane steps a mode names itself
		}
	}
	// a remainder of a few microseconds is AddPod returning, not a phase
	switch rest := added.Sub(prev); {
	case len(marks) == 0 || rest >= 100*time.Microsecond:
		out[standardPhases[next]] += rest
	case rest > 0:
		out[marks[len(marks)-1].phase] += rest
	}
	if !first.IsZero() {
		out[netmode.PhaseFirstPacket] = first.Sub(added)
	}
	return out
}

// summarize returns mean, p50, p95, min and max of ds in milliseconds.
func summarize(ds []time.Duration) map[string]float64 {
	if len(ds) == 0 {
		return nil
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	rank := func(q float64) time.Duration { // nearest rank
		i := int(q*float64(len(s))+0.999999) - 1
		if i < 0 {
			i = 0
		}
		return s[i]
	}
	return map[string]float64{
		"mean": ms(sum / time.Duration(len(s))), "p50": ms(rank(0.50)), "p95": ms(rank(0.95)),
		"min": ms(s[0]), "max": ms(s[len(s)-1]),
	}
}

// measureStartup creates repeat new pods on the client's host of pr, one
// at a time, and times each from the create call to the first ICMP echo
// reply from pr's server (none for same-pod: there the figure is the
// pod's creation alone). Beside it, it times pods with no network at all
// (a namespace with loopback), the reference the paper compares with.
func measureStartup(ctx context.Context, p Plan, l *lab.Lab, m netmode.Mode, pr pair, port int) result.Result {
	n := p.startupRepeat
	if n <= 0 {
		n = DefaultStartupRepeat
	}
	res := result.Result{
		Network: m.Name(), Workload: StartupName, Placement: string(pr.placement),
		Params: map[string]any{"repeat": n, "underlay_mtu": l.Cfg.MTU},
	}
	for k, v := range l.Cfg.ModeOptions {
		res.Params["mode_"+k] = v
	}
	h := pr.client.Host
	var peer *lab.Pod
	if pr.placement != netmode.SamePod {
		peer = pr.server
	}
	tag := map[netmode.Placement]string{netmode.SamePod: "p", netmode.SameHost: "h", netmode.CrossHost: "x"}[pr.placement]
	var totals, bare []time.Duration
	sums := map[string]time.Duration{}
	for i := 1; i <= n; i++ {
		if err := ctx.Err(); err != nil {
			res.Error = err.Error()
			return res
		}
		t := time.Now()
		if _, err := l.NewPodNS(ctx, h, fmt.Sprintf("n%s%d", tag, i)); err != nil {
			res.Error = "pod with no network: " + err.Error()
			return res
		}
		bare = append(bare, time.Since(t))

		var marks []phaseMark
		pctx := netmode.WithPhases(ctx, func(phase string, at time.Time) {
			marks = append(marks, phaseMark{phase, at})
		})
		t0 := time.Now()
		pod, err := m.AddPod(pctx, l, h, fmt.Sprintf("u%s%d", tag, i))
		added := time.Now()
		if err != nil {
			res.Error = fmt.Sprintf("creating pod %d: %v", i, err)
			return res
		}
		var first time.Time
		if peer != nil {
			addr, err := m.Expose(ctx, l, pod, peer, "udp", port)
			if err != nil {
				res.Error = err.Error()
				return res
			}
			res.Path = addr.Addr().String()
			if first, err = firstReply(ctx, pod.NetNS, addr.Addr(), startupProbeLimit); err != nil {
				res.Error = fmt.Sprintf("pod %d: %v", i, err)
				return res
			}
		}
		end := added
		if !first.IsZero() {
			end = first
		}
		totals = append(totals, end.Sub(t0))
		for ph, d := range splitPhases(t0, added, first, marks) {
			sums[ph] += d
		}
	}
	res.Metrics.StartupMs = summarize(totals)
	res.Metrics.PhasesMs = map[string]float64{}
	for ph, d := range sums {
		res.Metrics.PhasesMs[ph] = float64(d) / 1e6 / float64(n)
	}
	noNet := summarize(bare)["mean"]
	res.Metrics.Extra = map[string]float64{"no_network_ms": noNet}
	if noNet > 0 {
		res.Metrics.Extra["vs_no_network"] = res.Metrics.StartupMs["mean"] / noNet
	}
	// node-level phases the mode's Setup went through once for the lab
	// (calico-bgp: BGP sessions established), beside the per-pod ones
	if sp, ok := m.(netmode.SetupPhaser); ok {
		for ph, d := range sp.SetupPhases(l) {
			res.Metrics.Extra["setup_"+ph+"_ms"] = float64(d) / 1e6
		}
	}
	return res
}

// firstReply sends ICMP echo requests to dst from inside namespace ns every
// 5 ms until one is answered, and returns when the reply arrived.
func firstReply(ctx context.Context, ns string, dst netip.Addr, limit time.Duration) (time.Time, error) {
	fd, err := socketIn(ns, unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
	if err != nil {
		return time.Time{}, fmt.Errorf("probe socket in %s: %w", ns, err)
	}
	defer unix.Close(fd)
	id := uint16(os.Getpid())
	sa := &unix.SockaddrInet4{Addr: dst.As4()}
	buf := make([]byte, 1500)
	deadline := time.Now().Add(limit)
	for seq := uint16(1); ; seq++ {
		if err := ctx.Err(); err != nil {
			return time.Time{}, err
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("no reply from %s within %v of the pod's creation", dst, limit)
		}
		_ = unix.Sendto(fd, echoRequest(id, seq), 0, sa) // unreachable yet is the point
		wait := time.Now().Add(5 * time.Millisecond)
		for {
			left := time.Until(wait)
			if left <= 0 {
				break
			}
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if k, _ := unix.Poll(pfd, int(left/time.Millisecond)+1); k <= 0 {
				continue
			}
			n, from, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
			if err != nil {
				continue
			}
			if f, ok := from.(*unix.SockaddrInet4); ok && f.Addr == sa.Addr && isEchoReply(buf[:n], id) {
				return time.Now(), nil
			}
		}
	}
}

// echoRequest builds an ICMP echo request (type 8) with an 8-byte payload.
func echoRequest(id, seq uint16) []byte {
	b := make([]byte, 16)
	b[0] = 8
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], seq)
	copy(b[8:], "cnperf!!")
	binary.BigEndian.PutUint16(b[2:], icmpChecksum(b))
	return b
}

func icmpChecksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// isEchoReply reports whether pkt (an IPv4 packet as a raw socket returns
// it) is an echo reply (type 0) to identifier id.
func isEchoReply(pkt []byte, id uint16) bool {
	if len(pkt) < 20 {
		return false
	}
	ihl := int(pkt[0]&0x0f) * 4
	if len(pkt) < ihl+8 {
		return false
	}
	icmp := pkt[ihl:]
	return icmp[0] == 0 && binary.BigEndian.Uint16(icmp[4:]) == id
}

// socketIn opens a socket inside network namespace ns: the calling thread
// enters ns, makes the socket, and returns to its own namespace (a socket
// stays in the namespace it was made in). The thread is locked throughout
// and, should returning fail, never unlocked, so Go retires it.
func socketIn(ns string, domain, typ, proto int) (int, error) {
	runtime.LockOSThread()
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return -1, err
	}
	defer unix.Close(orig)
	target, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return -1, err
	}
	defer unix.Close(target)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return -1, err
	}
	fd, serr := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
	if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
		return -1, fmt.Errorf("returning from %s: %w", ns, err) // thread stays locked and dies
	}
	runtime.UnlockOSThread()
	return fd, serr
}

// startupBrief is the progress line of a startup result.
func startupBrief(mt result.Metrics) string {
	s := fmt.Sprintf("start-up mean %.1fms p50 %.1fms p95 %.1fms (no network %.1fms)",
		mt.StartupMs["mean"], mt.StartupMs["p50"], mt.StartupMs["p95"], mt.Extra["no_network_ms"])
	var keys []string
	for k := range mt.PhasesMs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s += fmt.Sprintf(" %s=%.1f", k, mt.PhasesMs[k])
	}
	return s
}

// runStartup is the runner's hook: measure, log, record.
func runStartup(ctx context.Context, p Plan, l *lab.Lab, m netmode.Mode, pr pair, port int, run *result.Run) {
	res := measureStartup(ctx, p, l, m, pr, port)
	if res.Error != "" {
		p.logf("  %-10s %-10s %-11s error: %s", m.Name(), pr.placement, StartupName, res.Error)
	} else {
		p.logf("  %-10s %-10s %-11s %s", m.Name(), pr.placement, StartupName, startupBrief(res.Metrics))
	}
	run.Results = append(run.Results, res)
}
