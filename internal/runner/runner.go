// Package runner turns a plan (networks x placements x workloads) into
// results: for each network it builds a fresh lab, lets the mode wire it,
// starts an agent in every pod, runs each workload's server and client
// halves through the agents, and tears everything down, whatever happens.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

// Case is one network in one placement.
type Case struct {
	Network   string
	Placement netmode.Placement
}

// Plan is what a run measures.
type Plan struct {
	Cases     []Case
	Workloads []string
	Params    workload.Params // zero fields take each workload's defaults
	Lab       lab.Config
	Repeat    int // runs of each measurement (default 1)
	// Pin, when set, binds the client agent to CPU Pin[0] and the server
	// agent to CPU Pin[1] (taskset), as the studies pinned their processes;
	// tools the agents start inherit it.
	Pin []int
	// Agent is the command line that starts an agent: argv[0] is the cnperf
	// binary; "--listen ADDR --parent PID" is appended.
	Agent []string
	Log   io.Writer // progress lines; nil for none
	// LBs and Services make it a ClusterIP service run (services.go): the
	// load balancers ("none" = pod IP) and the scale steps (default 1).
	LBs      []string
	Services []int

	startupRepeat int // Repeat as asked; 0 lets startup use its default
}

// LabSysctls are set in every lab namespace, as the studies tuned their
// hosts for many short connections.
var LabSysctls = [][2]string{
	{"net.ipv4.ip_local_port_range", "1024 65000"},
	{"net.ipv4.tcp_tw_reuse", "1"},
}

// NamespaceSysctls are read from a lab host for the environment record.
var NamespaceSysctls = []string{
	"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control",
	"net.ipv4.ip_local_port_range", "net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_fin_timeout",
	"net.core.somaxconn", "net.bridge.bridge-nf-call-iptables",
}

// Validate checks a plan before anything is built.
func (p *Plan) Validate() error {
	if len(p.Cases) == 0 {
		return errors.New("nothing to run: no network selected")
	}
	if len(p.Workloads) == 0 {
		return errors.New("nothing to run: no workload selected")
	}
	for _, c := range p.Cases {
		m, err := netmode.Get(c.Network)
		if err != nil {
			return err
		}
		if ok, why := netmode.Allows(m, c.Placement); !ok {
			return fmt.Errorf("%s cannot run %s: %s", c.Network, c.Placement, why)
		}
	}
	for _, name := range p.Workloads {
		w, err := workload.Get(name)
		if err != nil {
			return err
		}
		params := p.Params
		w.Defaults(&params)
		if err := w.Validate(params); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if len(p.Pin) != 0 && len(p.Pin) != 2 {
		return fmt.Errorf("pin wants two CPUs (client, server), got %v", p.Pin)
	}
	for _, c := range p.Pin {
		if c < 0 || c >= runtime.NumCPU() {
			return fmt.Errorf("cannot pin to CPU %d: this machine has CPUs 0 to %d", c, runtime.NumCPU()-1)
		}
	}
	if err := p.validateServices(); err != nil {
		return err
	}
	if p.Repeat < 0 || p.Repeat > 1000 {
		return fmt.Errorf("repeat %d; use 1 to 1000", p.Repeat)
	}
	return p.Lab.Validate()
}

func (p *Plan) logf(format string, args ...any) {
	if p.Log != nil {
		fmt.Fprintf(p.Log, format+"\n", args...)
	}
}

// Execute runs the plan and fills run. It returns ctx's error when cut short;
// whatever was measured until then is in run.
func Execute(ctx context.Context, p Plan, run *result.Run) error {
	if err := p.Validate(); err != nil {
		return err
	}
	p.startupRepeat = p.Repeat
	if p.Repeat == 0 {
		p.Repeat = 1
	}
	// group placements by network: one lab per network
	var order []string
	byNet := map[string][]netmode.Placement{}
	for _, c := range p.Cases {
		if _, seen := byNet[c.Network]; !seen {
			order = append(order, c.Network)
		}
		byNet[c.Network] = append(byNet[c.Network], c.Placement)
	}
	run.Environment.UnderlayMTU = p.Lab.MTU
	for _, name := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, _ := netmode.Get(name)
		if err := netmode.CheckOpts(m, p.Lab.ModeOptions); err != nil {
			p.logf("skip %s: %v", name, err)
			run.Skipped = append(run.Skipped, result.Skip{Network: name, Reason: err.Error()})
			continue
		}
		if err := runNetwork(ctx, p, m, byNet[name], run); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

type pair struct {
	placement      netmode.Placement
	client, server *lab.Pod
	cAgent, sAgent *agent.Client
	cKey, sKey     string // agent log names
}

// Built is a network built in a lab with agents running in its pods: what a
// measurement needs, and what `cnperf lab` keeps up for other tools.
type Built struct {
	Lab   *lab.Lab
	Mode  netmode.Mode
	Pairs []pair
	Ready time.Duration // from lab creation to agents answering
}

// PairInfo describes one client/server pair for display.
type PairInfo struct {
	Placement                netmode.Placement
	ClientNS, ServerNS       string
	ClientIP, ServerIP       string
	ClientAgent, ServerAgent string
}

// Info lists the pairs.
func (b *Built) Info() []PairInfo {
	var out []PairInfo
	for _, pr := range b.Pairs {
		out = append(out, PairInfo{
			Placement: pr.placement, ClientNS: pr.client.NetNS, ServerNS: pr.server.NetNS,
			ClientIP: pr.client.IP.String(), ServerIP: pr.server.IP.String(),
			ClientAgent: pr.cAgent.Addr, ServerAgent: pr.sAgent.Addr,
		})
	}
	return out
}

// Build creates a lab for mode m with a client/server pod pair per
// placement, each pod running an agent. On error everything built so far
// is torn down; on success the caller owns b.Lab and must Teardown it.
func Build(ctx context.Context, p Plan, m netmode.Mode, placements []netmode.Placement) (b *Built, err error) {
	cfg := p.Lab
	cfg.Name = m.Name()
	netmode.ShapeLab(m, &cfg)
	need := 1
	for _, pl := range placements {
		if pl == netmode.CrossHost {
			need = 2
		}
	}
	if cfg.Hosts < need {
		cfg.Hosts = need
	}
	l, err := lab.New(cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = l.Teardown()
		}
	}()
	b = &Built{Lab: l, Mode: m}
	p.logf("building %s (lab %s)", m.Name(), l.ID)
	t0 := time.Now()
	if err := prepare(ctx, l, m); err != nil {
		return nil, err
	}
	h1 := l.Hosts[0]
	agents := map[string]*agent.Client{} // by pod key
	ensureAgent := func(pod *lab.Pod, key string, cpu int) (*agent.Client, error) {
		if a, ok := agents[key]; ok {
			return a, nil
		}
		c, _, err := startAgent(ctx, p, l, pod, key, cpu)
		if err != nil {
			return nil, err
		}
		agents[key] = c
		return c, nil
	}
	podsByKey := map[string]*lab.Pod{}
	addPod := func(h *lab.Host, name string) (*lab.Pod, error) {
		if pod, ok := podsByKey[name]; ok {
			return pod, nil
		}
		pod, err := m.AddPod(ctx, l, h, name)
		if err != nil {
			return nil, fmt.Errorf("adding pod %s: %w", name, err)
		}
		if pod.Owned {
			for _, kv := range LabSysctls {
				_ = l.Sysctl(ctx, pod.NetNS, kv[0], kv[1])
			}
		}
		podsByKey[name] = pod
		return pod, nil
	}
	for _, pl := range placements {
		client, err := addPod(h1, "c1")
		if err != nil {
			return nil, err
		}
		var server *lab.Pod
		switch pl {
		case netmode.SamePod:
			server = client
		case netmode.SameHost:
			server, err = addPod(h1, "s1")
		case netmode.CrossHost:
			server, err = addPod(l.Hosts[1], "s2")
		}
		if err != nil {
			return nil, err
		}
		ccpu, scpu := -1, -1
		if len(p.Pin) == 2 {
			ccpu, scpu = p.Pin[0], p.Pin[1]
		}
		ca, err := ensureAgent(client, "c1", ccpu)
		if err != nil {
			return nil, err
		}
		skey := server.Name
		if pl == netmode.SamePod {
			skey = "c1-side" // a second container in the same pod
		}
		sa, err := ensureAgent(server, skey, scpu)
		if err != nil {
			return nil, err
		}
		b.Pairs = append(b.Pairs, pair{placement: pl, client: client, server: server, cAgent: ca, sAgent: sa, cKey: "agent-c1", sKey: "agent-" + skey})
	}
	b.Ready = time.Since(t0)
	p.logf("  %s ready in %v", m.Name(), b.Ready.Round(time.Millisecond))
	return b, nil
}

// prepare builds the lab's hosts, applies the study's sysctls to them and
// lets the mode wire them.
func prepare(ctx context.Context, l *lab.Lab, m netmode.Mode) error {
	if err := l.Create(ctx); err != nil {
		return err
	}
	for _, h := range l.Hosts {
		for _, kv := range LabSysctls {
			if err := l.Sysctl(ctx, h.NetNS, kv[0], kv[1]); err != nil {
				return err
			}
		}
	}
	if err := m.Setup(ctx, l); err != nil {
		return fmt.Errorf("setting up: %w", err)
	}
	return nil
}

// startAgent starts an agent in pod (on CPU cpu when cpu >= 0), its log
// named agent-KEY, and waits until it answers; it returns the agent's pid.
func startAgent(ctx context.Context, p Plan, l *lab.Lab, pod *lab.Pod, key string, cpu int) (*agent.Client, int, error) {
	sockPath := l.Dir + "/" + key + ".sock"
	argv := append(append([]string{}, p.Agent...), "--listen", "unix:"+sockPath, "--parent", fmt.Sprint(os.Getpid()))
	if cpu >= 0 {
		argv = append([]string{"taskset", "-c", fmt.Sprint(cpu)}, argv...)
	}
	proc, err := l.Start(pod.NetNS, "agent-"+key, argv...)
	if err != nil {
		return nil, 0, err
	}
	c := &agent.Client{Network: "unix", Addr: sockPath}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pid, err := c.Wait(wctx)
	if err != nil {
		select {
		case <-proc.Done():
			return nil, 0, fmt.Errorf("agent in %s exited: %s", pod.NetNS, l.LogTail("agent-"+key, 5))
		default:
		}
		return nil, 0, err
	}
	return c, pid, nil
}

func runNetwork(ctx context.Context, p Plan, m netmode.Mode, placements []netmode.Placement, run *result.Run) (err error) {
	if len(p.LBs) > 0 {
		return runServices(ctx, p, m, run)
	}
	b, err := Build(ctx, p, m, placements)
	if err != nil {
		return err
	}
	l := b.Lab
	defer func() {
		if terr := l.Teardown(); terr != nil && err == nil {
			err = fmt.Errorf("teardown: %w", terr)
		}
	}()
	if run.Environment.Offloads == nil {
		captureLabEnv(ctx, l, run)
	}
	port := 5201
	for _, pr := range b.Pairs {
		for _, wname := range p.Workloads {
			if wname == StartupName {
				runStartup(ctx, p, l, m, pr, port, run)
				continue
			}
			w, _ := workload.Get(wname)
			for rep := 0; rep < p.Repeat; rep++ {
				base := p.Params
				w.Defaults(&base)
				err := eachStep(ctx, w, base, func(params *workload.Params, label string) result.Result {
					params.Port = port
					port++
					res := measure(ctx, p, l, m, w, pr, *params)
					if ctx.Err() != nil {
						return res
					}
					res.Step = label
					name := wname
					if label != "" {
						name += " " + label
					}
					if res.Error != "" {
						p.logf("  %-10s %-10s %-11s error: %s", m.Name(), pr.placement, name, res.Error)
					} else {
						p.logf("  %-10s %-10s %-11s %s", m.Name(), pr.placement, name, brief(res.Metrics))
					}
					run.Results = append(run.Results, res)
					return res
				})
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// eachStep runs workload w from base: once for an ordinary workload, step
// by step for a Stepper, each step chosen from what the earlier ones
// measured. one measures a step (it may fill in params, e.g. the port) and
// returns its result; eachStep returns ctx's error when ctx ends.
func eachStep(ctx context.Context, w workload.Workload, base workload.Params, one func(params *workload.Params, label string) result.Result) error {
	st, stepped := w.(workload.Stepper)
	var done []workload.StepResult
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		params, label := base, ""
		if stepped {
			var more bool
			if params, label, more = st.Next(base, done); !more {
				return nil
			}
		}
		res := one(&params, label)
		if err := ctx.Err(); err != nil {
			return err
		}
		if !stepped {
			return nil
		}
		var serr error
		if res.Error != "" {
			serr = errors.New(res.Error)
		}
		done = append(done, workload.StepResult{Params: params, Metrics: res.Metrics, Err: serr})
	}
}

func measure(ctx context.Context, p Plan, l *lab.Lab, m netmode.Mode, w workload.Workload, pr pair, params workload.Params) result.Result {
	res := result.Result{
		Network: m.Name(), Workload: w.Name(), Placement: string(pr.placement),
		Params: map[string]any{
			"duration_s": params.Duration.Seconds(), "message_size": params.MessageSize,
			"underlay_mtu": l.Cfg.MTU,
		},
	}
	if params.Direction != "" && w.Name() != "tcp_rr" && w.Name() != "udp_rr" && w.Name() != "tcp_crr" {
		res.Params["direction"] = params.Direction
	}
	for k, v := range params.Extra {
		res.Params[k] = v
	}
	for k, v := range l.Cfg.ModeOptions { // e.g. weave's encrypt: part of what was measured
		res.Params["mode_"+k] = v
	}
	if len(p.Pin) == 2 {
		res.Params["pinned_cpus"] = fmt.Sprintf("client=%d server=%d", p.Pin[0], p.Pin[1])
	}
	addr, err := m.Expose(ctx, l, pr.client, pr.server, w.Proto(), params.Port)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Path = addr.String()
	dcpu, hasDaemons := m.(netmode.DaemonCPU)
	var dcpu0 float64
	if hasDaemons {
		dcpu0 = dcpu.DaemonCPUSeconds(l)
	}
	witnessNS, witnessDev := receiverDevice(w, pr, params)
	rx0, witnessOK := ifaceRxBytes(ctx, l, witnessNS, witnessDev)
	srv, err := pr.sAgent.Serve(ctx, w.Name(), params)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	rctx, cancel := context.WithTimeout(ctx, params.Duration+30*time.Second)
	crep, cerr := pr.cAgent.Run(rctx, w.Name(), params, addr)
	cancel()
	if w.Proto() == "udp" {
		time.Sleep(50 * time.Millisecond) // datagrams in flight reach the server's count
	}
	srep, serr := srv.Stop()
	if cerr != nil {
		res.Error = "client: " + cerr.Error() + agentLog(l, pr.cKey)
		return res
	}
	if serr != nil {
		res.Error = "server: " + serr.Error() + agentLog(l, pr.sKey)
		return res
	}
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
	if hasDaemons {
		if mt.Extra == nil {
			mt.Extra = map[string]float64{}
		}
		mt.Extra["daemon_cpu_s_per_s"] = (dcpu.DaemonCPUSeconds(l) - dcpu0) / params.Duration.Seconds()
	}
	if rx1, ok := ifaceRxBytes(ctx, l, witnessNS, witnessDev); witnessOK && ok && mt.Bytes != nil && *mt.Bytes > 0 {
		// The kernel's own count of what the receiving interface took in,
		// headers included: an independent witness that the payload bytes
		// the receiver reported really crossed the network.
		if mt.Extra == nil {
			mt.Extra = map[string]float64{}
		}
		mt.Extra["iface_rx_bytes"] = float64(rx1 - rx0)
		mt.Extra["iface_rx_per_payload_byte"] = float64(rx1-rx0) / float64(*mt.Bytes)
	}
	res.Metrics = mt
	res.Histogram = h
	return res
}

// receiverDevice is the interface the stream's receiver takes data in on:
// loopback when both ends share a namespace.
func receiverDevice(w workload.Workload, pr pair, p workload.Params) (ns, dev string) {
	if !strings.HasSuffix(w.Name(), "_stream") && !strings.HasPrefix(w.Name(), "iperf3") {
		return "", ""
	}
	rx := pr.server
	if p.Direction == "down" {
		rx = pr.client
	}
	if pr.client.NetNS == pr.server.NetNS {
		return rx.NetNS, "lo"
	}
	return rx.NetNS, rx.Dev
}

// ifaceRxBytes reads an interface's received-bytes counter in a namespace.
func ifaceRxBytes(ctx context.Context, l *lab.Lab, ns, dev string) (uint64, bool) {
	if ns == "" || dev == "" {
		return 0, false
	}
	out, err := l.In(ctx, ns, "cat", "/sys/class/net/"+dev+"/statistics/rx_bytes")
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	return v, err == nil
}

func captureLabEnv(ctx context.Context, l *lab.Lab, run *result.Run) {
	h := l.Hosts[0]
	run.Environment.Offloads = map[string]string{}
	if out, err := l.In(ctx, h.NetNS, "ethtool", "-k", h.Dev); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok {
				continue
			}
			switch k {
			case "tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload",
				"tx-checksumming", "rx-checksumming", "scatter-gather", "large-receive-offload":
				run.Environment.Offloads[k] = strings.Fields(v)[0]
			}
		}
	} else {
		run.Environment.Offloads["unknown"] = "ethtool not installed (apt-get install ethtool)"
	}
	args := append([]string{"sysctl", "-e"}, NamespaceSysctls...)
	if out, err := l.In(ctx, h.NetNS, args...); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			k, v, ok := strings.Cut(line, "=")
			if ok {
				run.Environment.Sysctls["lab:"+strings.TrimSpace(k)] = strings.Join(strings.Fields(v), " ")
			}
		}
	}
}

func brief(m result.Metrics) string {
	var parts []string
	if m.ThroughputBps != nil {
		parts = append(parts, fmt.Sprintf("%.2f Gbit/s", *m.ThroughputBps/1e9))
	}
	if m.LossRatio != nil {
		parts = append(parts, fmt.Sprintf("loss %.2f%%", *m.LossRatio*100))
	}
	if m.TransactionsPerS != nil {
		parts = append(parts, fmt.Sprintf("%.0f trans/s", *m.TransactionsPerS))
	}
	if m.LatencyUs != nil {
		parts = append(parts, fmt.Sprintf("p50 %.1fus p99 %.1fus", m.LatencyUs["p50"], m.LatencyUs["p99"]))
	}
	return strings.Join(parts, ", ")
}

// agentLog is the end of an agent's log, for an error message.
func agentLog(l *lab.Lab, key string) string {
	if t := strings.TrimSpace(l.LogTail(key, 3)); t != "" {
		return " (agent log: " + strings.ReplaceAll(t, "\n", " | ") + ")"
	}
	return ""
}
