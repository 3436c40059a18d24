// Package measure is cnperf's one measure path: a workload's server half
// on one or more pods, its client half on another, both through their
// agents on any backend, and the result it records — figures, CPU cost,
// what the kernel saw, the witness of the bytes that crossed.
package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/speed"
	"github.com/cnperf/cnperf/internal/workload"
)

// Spec is one measurement.
type Spec struct {
	Workload workload.Workload
	Params   workload.Params
	Client   string   // pod running the client half
	Servers  []string // pods running the server half (several: service backends)
	// Addr is what the client dials; zero: the backend's address of the
	// first server for Params.Port.
	Addr netip.AddrPort
	Path string // how the dialled address is described ("" = Addr)
	// Flows runs that many flows at once between the client and the
	// servers (0 or 1: one), each on its own port (Params.Port+i): the
	// result is their aggregate, with each flow's figures in Result.Flows
	// and Jain's fairness index over their main figure.
	Flows int
}

// Measure runs s in d and returns its result (Error set when it failed;
// the caller sets the cell's identity: network, placement, lb, step).
func Measure(ctx context.Context, d backend.Deployment, s Spec) result.Result {
	w, params := s.Workload, s.Params
	res := result.Result{
		Network: d.Network(), Workload: w.Name(),
		Params: map[string]any{"duration_s": params.Duration.Seconds(), "message_size": params.MessageSize},
	}
	if params.Direction != "" && workload.IsBulk(w) {
		res.Params["direction"] = params.Direction
	}
	if n, ok := d.(backend.Named); ok {
		res.Backend = n.Backend()
	}
	for k, v := range d.Params() {
		res.Params[k] = v
	}
	for k, v := range params.Extra {
		res.Params[k] = v
	}
	client := d.Pod(s.Client)
	if client == nil || len(s.Servers) == 0 {
		res.Error = fmt.Sprintf("no client pod %q or no server", s.Client)
		return res
	}
	var servers []*backend.Pod
	for _, name := range s.Servers {
		p := d.Pod(name)
		if p == nil {
			res.Error = fmt.Sprintf("no server pod %q", name)
			return res
		}
		servers = append(servers, p)
	}
	addr := s.Addr
	if !addr.IsValid() {
		var err error
		if addr, err = d.Dial(ctx, s.Client, s.Servers[0], w.Proto(), params.Port); err != nil {
			res.Error = err.Error()
			return res
		}
	}
	res.Path = s.Path
	if res.Path == "" {
		res.Path = addr.String()
	}

	// the receiver's interface: its kernel's count of what came in,
	// headers included, witnesses the payload bytes that crossed
	var rxPod, rxPeer string
	if workload.IsBulk(w) && len(s.Servers) == 1 {
		rxPod, rxPeer = s.Servers[0], s.Client
		if params.Direction == "down" {
			rxPod, rxPeer = rxPeer, rxPod
		}
	}
	rxc, hasRx := d.(backend.RxCounter)
	var rx0 uint64
	rxOK := false
	if hasRx && rxPod != "" {
		rx0, rxOK = rxc.RxBytes(ctx, rxPod, rxPeer)
	}
	dm, hasDaemons := d.(backend.DaemonMeter)
	var dcpu0 float64
	if hasDaemons {
		dcpu0, hasDaemons = dm.DaemonCPUSeconds()
	}
	snmp, hasSNMP := d.(backend.SNMPReader)
	var snmp0 map[string]int64
	if hasSNMP {
		snmp0 = snmpOf(ctx, snmp, s, params)
	}
	meter, hasCPU := d.(backend.CPUMeter)
	var witness *speed.Witness
	if hasCPU {
		// the machine's speed around the cell, probed outside the
		// measured interval: a meter of this machine's CPU says the
		// cell's pods share this machine's kernel
		witness = speed.Start()
	}
	var cpu0 ground.CPUTimes
	t0 := time.Now()
	if hasCPU {
		var err error
		if cpu0, err = meter.MachineCPU(ctx); err != nil {
			hasCPU = false
		}
	}

	flows := max(1, s.Flows)
	if flows > 1 && s.Addr.IsValid() {
		res.Error = "parallel flows to a given address are not supported; drop --parallel"
		return res
	}
	addrs := []netip.AddrPort{addr}
	for i := 1; i < flows; i++ {
		a, err := d.Dial(ctx, s.Client, s.Servers[0], w.Proto(), params.Port+i)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		addrs = append(addrs, a)
	}
	if flows > 1 {
		res.Params["flows"] = flows
	}
	flowParams := func(i int) workload.Params {
		fp := params
		fp.Port = params.Port + i
		return fp
	}

	var srvs [][]*agent.Server // per flow, per server pod
	stopAll := func() ([][]workload.Report, error) {
		var reps [][]workload.Report
		var errs []error
		for _, fs := range srvs {
			var fr []workload.Report
			for _, srv := range fs {
				r, err := srv.Stop()
				fr = append(fr, r)
				errs = append(errs, err)
			}
			reps = append(reps, fr)
		}
		srvs = nil
		return reps, errors.Join(errs...)
	}
	for i := 0; i < flows; i++ {
		srvs = append(srvs, nil)
		for _, p := range servers {
			srv, err := p.Agent.Serve(ctx, w.Name(), flowParams(i))
			if err != nil {
				_, _ = stopAll()
				res.Error = fmt.Sprintf("server on %s: %v", p.Name, err)
				return res
			}
			srvs[i] = append(srvs[i], srv)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, agent.RunDeadline(params.Duration))
	// a server frozen or gone mid-cell would keep the client waiting for
	// answers until its deadline: once the client is late, the servers'
	// health is asked, and a cause found ends the cell at once
	var serverFault error
	watched := make(chan struct{})
	watch := time.AfterFunc(params.Duration+agent.Slack(params.Duration)/2, func() {
		defer close(watched)
		for _, p := range servers {
			if err := p.Agent.Check(); err != nil {
				serverFault = fmt.Errorf("server on %s: %w", p.Name, err)
				cancel()
				return
			}
		}
	})
	creps := make([]workload.Report, flows)
	cerrs := make([]error, flows)
	var wg sync.WaitGroup
	for i := 0; i < flows; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			creps[i], cerrs[i] = client.Agent.Run(rctx, w.Name(), flowParams(i), addrs[i])
		}()
	}
	wg.Wait()
	if !watch.Stop() {
		<-watched // it ran: its verdict is read once it is done
	}
	cancel()
	crep, cerr := creps[0], errors.Join(cerrs...)
	if w.Proto() == "udp" {
		time.Sleep(50 * time.Millisecond) // datagrams in flight reach the server's count
	}
	var cpu1 ground.CPUTimes
	wall := time.Since(t0)
	if hasCPU {
		var err error
		if cpu1, err = meter.MachineCPU(ctx); err != nil {
			hasCPU = false
		}
	}
	res.MachineSpeed = witness.Stop()
	fsreps, serr := stopAll()
	if serverFault != nil {
		// the client's error (cancelled, or the server's silence) follows
		// from it
		res.Error = serverFault.Error()
		return res
	}
	if cerr != nil && errors.Is(serr, agent.ErrNoAnswer) {
		// the server's silence is the cause; the client's error follows
		res.Error = "server: " + serr.Error() + "; client: " + cerr.Error()
		return res
	}
	if cerr != nil {
		// a server gone with its container or pod (an engine killed)
		// shows at the client as a closed connection: the servers'
		// health names what happened, ahead of the client's error
		for _, p := range servers {
			if err := p.Agent.Check(); err != nil {
				res.Error = fmt.Sprintf("server on %s: %v; client: %v", p.Name, err, cerr)
				return res
			}
		}
		res.Error = "client: " + cerr.Error() + logOf(d, s.Client)
		return res
	}
	if serr != nil {
		res.Error = "server: " + serr.Error()
		if len(s.Servers) == 1 {
			res.Error += logOf(d, s.Servers[0])
		}
		return res
	}
	sreps := fsreps[0]
	if flows > 1 {
		// each flow's figures, then the aggregate over every flow; the
		// agents' CPU of concurrent jobs in one process is that process's
		// (each job reports the process's), so it is the largest, not a sum
		var all []workload.Report
		var ccpu, scpu float64
		for i := 0; i < flows; i++ {
			sr := MergeReports(fsreps[i])
			m, _, err := w.Metrics(flowParams(i), creps[i], sr)
			if err != nil {
				res.Error = fmt.Sprintf("flow %d: %v", i+1, err)
				return res
			}
			res.Flows = append(res.Flows, m)
			all = append(all, sr)
			ccpu, scpu = math.Max(ccpu, creps[i].CPUSeconds), math.Max(scpu, sr.CPUSeconds)
		}
		crep = MergeReports(creps)
		crep.CPUSeconds = ccpu
		sreps = []workload.Report{MergeReports(all)}
		sreps[0].CPUSeconds = scpu
	}
	srep := MergeReports(sreps)
	mt, h, err := w.Metrics(params, crep, srep)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if crep.Seconds > 0 {
		mt.ClientCPUSPerS = result.F(crep.CPUSeconds / params.Duration.Seconds())
	}
	if srep.CPUSeconds > 0 {
		mt.ServerCPUSPerS = result.F(srep.CPUSeconds / params.Duration.Seconds())
	}
	daemons := -1.0
	if hasDaemons {
		if dcpu1, ok := dm.DaemonCPUSeconds(); ok {
			daemons = dcpu1 - dcpu0
			setExtra(&mt, result.ExtraDaemonCPU, (dcpu1-dcpu0)/params.Duration.Seconds())
		}
	}
	if rxOK && mt.Bytes != nil && *mt.Bytes > 0 {
		if rx1, ok := rxc.RxBytes(ctx, rxPod, rxPeer); ok {
			setExtra(&mt, result.ExtraIfaceRxBytes, float64(rx1-rx0))
			setExtra(&mt, result.ExtraIfaceRxPerBytes, float64(rx1-rx0)/float64(*mt.Bytes))
		}
	}
	if hasCPU {
		mt.CPU = Cost(cpu1.Sub(cpu0), wall, crep.CPUSeconds+srep.CPUSeconds, daemons, mt)
		speed.SetShare(res.MachineSpeed, mt.CPU)
	}
	if hasSNMP && snmp0 != nil {
		if snmp1 := snmpOf(ctx, snmp, s, params); snmp1 != nil {
			mt.Kernel = kernelCounters(w.Proto(), snmp0, snmp1)
		}
	}
	if len(res.Flows) > 1 {
		setExtra(&mt, result.ExtraFlows, float64(len(res.Flows)))
		if key := mainKey(w); key != "" {
			var xs []float64
			for _, f := range res.Flows {
				if v, ok := f.Value(key); ok {
					xs = append(xs, v)
				}
			}
			if len(xs) == len(res.Flows) {
				setExtra(&mt, result.ExtraJain, Jain(xs))
				lo, hi := xs[0], xs[0]
				for _, x := range xs {
					lo, hi = math.Min(lo, x), math.Max(hi, x)
				}
				setExtra(&mt, result.ExtraFlowMin, lo)
				setExtra(&mt, result.ExtraFlowMax, hi)
			}
		}
	}
	res.Metrics = mt
	res.Histogram = h
	return res
}

// mainKey is the key of w's main figure (its first), "" when it has none.
func mainKey(w workload.Workload) string {
	if fs := w.Figures(); len(fs) > 0 {
		return fs[0].Key
	}
	return ""
}

// Jain is Jain's fairness index of xs: (Σx)² / (n·Σx²), 1 when every flow
// got the same, 1/n when one got everything (0 for no data).
func Jain(xs []float64) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(xs)) * sq)
}

func logOf(d backend.Deployment, pod string) string {
	if t := d.AgentLog(pod); t != "" {
		return " (agent log: " + oneLine(t) + ")"
	}
	return ""
}

func oneLine(s string) string {
	out := []rune{}
	for _, r := range s {
		if r == '\n' {
			out = append(out, ' ', '|', ' ')
			continue
		}
		out = append(out, r)
	}
	return string(out)
}

func setExtra(mt *result.Metrics, k string, v float64) {
	if mt.Extra == nil {
		mt.Extra = map[string]float64{}
	}
	mt.Extra[k] = v
}

// Cost is the CPU a cell cost: busy machine time (user, system, irq,
// softirq over every CPU), the agents' own, and the cell's alone (agents,
// the network's daemons, ksoftirqd), per transaction and per payload byte
// where the metrics count them. daemons < 0: the network has none metered.
func Cost(delta ground.CPUTimes, wall time.Duration, agents, daemons float64, mt result.Metrics) *result.CPUCost {
	c := &result.CPUCost{
		WallS: wall.Seconds(), MachineS: delta.Busy(), UserS: delta.User + delta.Nice, SystemS: delta.System,
		SoftirqS: delta.SoftIRQ, IRQS: delta.IRQ, AgentsS: agents,
	}
	var cell float64
	if agents > 0 {
		c.KSoftirqdS = result.F(max(delta.KSoftirqd, 0))
		cell = agents + max(daemons, 0) + *c.KSoftirqdS
		c.CellS = result.F(cell)
	}
	if mt.Transactions != nil && *mt.Transactions > 0 {
		n := float64(*mt.Transactions)
		c.UsPerTrans = result.F(c.MachineS / n * 1e6)
		if agents > 0 {
			c.AgentsUsPerTrans = result.F(agents / n * 1e6)
			c.CellUsPerTrans = result.F(cell / n * 1e6)
		}
	}
	if mt.Bytes != nil && *mt.Bytes > 0 {
		n := float64(*mt.Bytes)
		c.NsPerByte = result.F(c.MachineS / n * 1e9)
		if agents > 0 {
			c.AgentsNsPerByte = result.F(agents / n * 1e9)
			c.CellNsPerByte = result.F(cell / n * 1e9)
		}
	}
	return c
}

// snmpOf reads the counters of the pod whose kernel counts the losses:
// the sender's for TCP retransmissions, the receiver's for UDP drops.
func snmpOf(ctx context.Context, r backend.SNMPReader, s Spec, p workload.Params) map[string]int64 {
	pod := s.Client // TCP: the client sends (requests; bulk up)
	if s.Workload.Proto() == "udp" || p.Direction == "down" {
		pod = s.Servers[0]
	}
	if s.Workload.Proto() == "udp" && p.Direction == "down" {
		pod = s.Client
	}
	m, err := r.SNMP(ctx, pod)
	if err != nil {
		return nil
	}
	return m
}

func kernelCounters(proto string, a, b map[string]int64) *result.KernelCounters {
	d := func(k string) *int64 {
		x, ok1 := a[k]
		y, ok2 := b[k]
		if !ok1 || !ok2 {
			return nil
		}
		return result.I(y - x)
	}
	if proto == "udp" {
		return &result.KernelCounters{UDPRcvbufErrs: d("Udp:RcvbufErrors"), UDPInErrs: d("Udp:InErrors")}
	}
	return &result.KernelCounters{TCPRetrans: d("Tcp:RetransSegs")}
}

// MergeReports adds up the server halves of several backends: counts and
// CPU add, the window is the longest, histograms merge exactly.
func MergeReports(reps []workload.Report) workload.Report {
	if len(reps) == 1 {
		return reps[0]
	}
	var out workload.Report
	var h *hist.H
	for _, r := range reps {
		out.Bytes += r.Bytes
		out.Messages += r.Messages
		out.Transactions += r.Transactions
		out.Errors += r.Errors
		out.CPUSeconds += r.CPUSeconds
		if r.Seconds > out.Seconds {
			out.Seconds = r.Seconds
		}
		for k, v := range r.Extra {
			if out.Extra == nil {
				out.Extra = map[string]float64{}
			}
			out.Extra[k] += v
		}
		if r.Histogram != "" {
			if x, err := hist.Decode(r.Histogram); err == nil {
				if h == nil {
					h = x
				} else {
					h.Merge(x)
				}
			}
		}
	}
	if h != nil {
		out.Histogram, _ = h.Encode()
	}
	return out
}

// Brief is a result's progress line: a few of its figures.
func Brief(r result.Result) string {
	m := r.Metrics
	s := ""
	add := func(f string, a ...any) {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf(f, a...)
	}
	if m.ThroughputBps != nil {
		add("%.2f Gbit/s", *m.ThroughputBps/1e9)
	}
	if m.LossRatio != nil {
		add("loss %.2f%%", *m.LossRatio*100)
	}
	if m.TransactionsPerS != nil {
		add("%.0f trans/s", *m.TransactionsPerS)
	}
	if m.LatencyUs != nil {
		add("p50 %.1fus p99 %.1fus", m.LatencyUs["p50"], m.LatencyUs["p99"])
	}
	if m.StartupMs != nil {
		add("start-up mean %.1fms p50 %.1fms p95 %.1fms", m.StartupMs["mean"], m.StartupMs["p50"], m.StartupMs["p95"])
	}
	if m.CPU != nil {
		if m.CPU.CellUsPerTrans != nil {
			add("CPU %.1fus/trans", *m.CPU.CellUsPerTrans)
		} else if m.CPU.CellNsPerByte != nil {
			add("CPU %.2fns/B", *m.CPU.CellNsPerByte)
		}
	}
	return s
}
