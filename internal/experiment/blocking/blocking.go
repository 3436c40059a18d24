// Package blocking is seed 002's experiment (Kubernetes vs Mesos under
// production load): one real nginx load balancer splits the same HTTP
// traffic over backends that sit on different networks at the
// same time, and per network the balancer's blocking time to its backend
// (nginx's $upstream_connect_time and $upstream_header_time, from its
// access log) is compared with the baseline's, measured in the same
// second under the same load. Selected like a workload: --workloads
// blocking; suite blocking.
//
// The lab builds each network as a lab of its own, on the same address
// ranges, so one balancer cannot route to all their pods. Each network
// is therefore reached the way the study's cloud balancer reached a
// machine: through an entry point of its own. Every request takes
//
//	client --loopback--> nginx (balancer lab, pod lb)
//	  --veth lbN (10.253.N.1 -> 10.253.N.2:800K)--> entry pod c1 of network N (host 1)
//	  --DNAT and masquerade (REDIRECT when the backend shares c1's namespace:
//	    the baseline's and host's same-host rows)-->
//	  the network's own pod-to-pod path --> backend pod (s1 same host, s2 other host)
//
// so the entry pod forwards like a Kubernetes NodePort (DNAT and
// masquerade, as kube-proxy does for externalTrafficPolicy Cluster) and
// the rest of the path is exactly the pod-to-pod path cnperf measures
// elsewhere. The veth and the NAT are the same for every row, the
// baseline's included (its entry "pod" is the host's namespace), so the
// difference to the baseline is the network's own cost.
//
// nginx logs times in whole milliseconds, read from a clock it updates
// once per event-loop wake-up. A request's start falls at a random phase
// of the millisecond, so a time t below 1 ms logs as 1 ms with probability
// t/1 ms and as 0 otherwise: the mean over many requests estimates t to
// within its standard error (reported), while the percentiles stay whole
// milliseconds. The study reported means, too.
package blocking

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/nginx"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
	_ "github.com/cnperf/cnperf/internal/workload/load" // http_rate: the client and the backends
)

// Name is the measurement's name, as a workload would have.
const Name = "blocking"

// The workload the client and the backends run.
const driver = "http_rate"

// Defaults of the load: a total rate the balancer, the client and every
// backend hold together on a 2-CPU machine.
const (
	DefaultRate        = 500
	DefaultConnections = 16
	MaxRate            = 50000
	MaxConnections     = 4096
)

// Ports and addresses.
const (
	LBPort      = 8080 // the balancer listens here (pod lb)
	BackendPort = 8080 // every backend pod serves here
	EntryPort   = 8001 // the entry end of link N forwards EntryPort+K to the K-th backend of network N
	// LinkNet is where the links between the balancer and the networks'
	// entry pods are numbered: link N is LinkNet.N.0/30, the balancer .1,
	// the entry pod .2. It overlaps no lab range (underlay 10.100/16, pods
	// 10.244/16, services 10.96/12).
	LinkNet = "10.253"
	// MaxNetworks bounds the links (one /30 per network in LinkNet.N).
	MaxNetworks = 250
	// LinkDev is the entry end's name in each entry pod.
	LinkDev = "cnperf-lb"
)

// ConnectQuantile is the metrics.extra key of a connect-time percentile:
// "connect_p99_us".
func ConnectQuantile(q string) string { return result.ExtraQuantileUs("connect", q) }

// Figures: the mean blocking time (header time: connect, request, the
// backend's answer) with its ratio to the baseline, its difference to the
// baseline's, the percentiles as nginx logs them, the connect time.
var Figures = []result.Figure{
	{Key: "latency_us.mean", Label: "blocking mean us", Unit: "us", Better: result.LowerBetter, Kind: result.KindTime, Ratio: true},
	{Key: result.ExtraKey(result.ExtraBlockingDiff), Label: "vs baseline us", Unit: "us more than the baseline", Better: result.LowerBetter, Kind: result.KindTime},
	{Key: "latency_us.p50", Label: "p50 us", Unit: "us", Better: result.LowerBetter, Kind: result.KindTime},
	{Key: "latency_us.p99", Label: "p99 us", Unit: "us", Better: result.LowerBetter, Kind: result.KindTime},
	{Key: result.ExtraKey(result.ExtraConnectMean), Label: "connect mean us", Unit: "us", Better: result.LowerBetter, Kind: result.KindTime},
	{Key: result.KeyTransactions, Label: "req/s", Unit: "1/s", Better: result.HigherBetter, Kind: result.KindRate},
	{Key: result.KeyErrors, Label: "errors", Better: result.LowerBetter, Kind: result.KindCount, ZeroIfAbsent: true},
}

// Percentiles reported of both times (besides mean and max).
var Percentiles = []struct {
	Key string
	Q   float64
}{{"p50", 50}, {"p90", 90}, {"p99", 99}, {"p99.9", 99.9}}

const summary = "seed 002: one nginx balancer splits HTTP traffic over backends on every network at once; its blocking time per network (upstream connect/header time) and the difference to the baseline's"

// options are the http_rate options the experiment takes: its load.
var options = []string{"rate", "connections", "response-size", "server"}

func init() {
	experiment.Register(Blocking{}, 25)
	var specs []option.Spec
	if w, err := workload.Get(driver); err == nil {
		for _, s := range workload.OptionsOf(w) {
			if slices.Contains(options, s.Name) {
				specs = append(specs, s)
			}
		}
	}
	workload.RegisterMeasure(workload.Measure{Name: Name, Summary: summary, Figures: Figures, Options: specs})
}

// Blocking is the experiment.
type Blocking struct{}

// Name implements experiment.Experiment.
func (Blocking) Name() string { return Name }

// Summary implements experiment.Experiment.
func (Blocking) Summary() string { return summary }

// Measures implements experiment.Measurer.
func (Blocking) Measures() map[string]string { return map[string]string{Name: summary} }

// Claim takes the "blocking" measurement.
func (Blocking) Claim(p *experiment.Plan) []string {
	if slices.Contains(p.Workloads, Name) {
		return []string{Name}
	}
	return nil
}

// load is the experiment's load, from the plan.
type load struct {
	rate, connections, size int
	sent                    int // the rate the client runs at: the largest prime <= rate (see Prime)
	server                  string
	duration                time.Duration
}

func loadOf(p *experiment.Plan) (load, error) {
	l := load{rate: DefaultRate, connections: DefaultConnections, size: 350, server: "builtin", duration: p.Params.Duration}
	if l.duration == 0 {
		l.duration = 10 * time.Second
	}
	x := p.Params.Extra
	atoi := func(key string, lo, hi int, dst *int, eg string) error {
		v := x[key]
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("--%s %q for blocking: use one number from %d to %d, e.g. --%s %s", key, v, lo, hi, key, eg)
		}
		*dst = n
		return nil
	}
	if err := atoi("rate", 2, MaxRate, &l.rate, "500"); err != nil {
		return l, err
	}
	l.sent = Prime(l.rate)
	if err := atoi("connections", 1, MaxConnections, &l.connections, "16"); err != nil {
		return l, err
	}
	if err := atoi("response-size", 251, 1<<20, &l.size, "350"); err != nil {
		return l, err
	}
	if v := x["server"]; v != "" {
		l.server = v
	}
	return l, nil
}

func (l load) params(port int) workload.Params {
	return workload.Params{Duration: l.duration, MessageSize: l.size, Port: port, Extra: map[string]string{
		"rate": strconv.Itoa(l.sent), "connections": strconv.Itoa(l.connections),
		"response-size": strconv.Itoa(l.size), "server": l.server,
	}}
}

// Validate implements experiment.Experiment.
func (Blocking) Validate(p *experiment.Plan, _ []string) error {
	if p.Backend != nil && !backend.Has(p.Backend, backend.LocalLabs) {
		return fmt.Errorf("blocking links every network's lab to one balancer; it runs on the local lab only: use --backend lab")
	}
	l, err := loadOf(p)
	if err != nil {
		return err
	}
	only := !slices.ContainsFunc(p.Workloads, func(w string) bool { return w != Name })
	if only && (p.Params.MessageSize != 0 || p.Params.Direction != "") {
		return fmt.Errorf("blocking sends HTTP requests: --message-size and --direction do not apply; set the answer's size with --response-size")
	}
	if _, err := nginx.Binary(); err != nil {
		return fmt.Errorf("blocking: the balancer is a real nginx: %w", err)
	}
	order, _ := pairs.ByNetwork(p)
	if len(order) > MaxNetworks {
		return fmt.Errorf("blocking: %d networks; the balancer links to at most %d", len(order), MaxNetworks)
	}
	w, _ := workload.Get(driver)
	params := l.params(BackendPort)
	w.Defaults(&params)
	if err := w.Validate(params); err != nil {
		return fmt.Errorf("blocking: %w", err)
	}
	return nil
}

// row is one network in one placement: a backend of the balancer.
type row struct {
	network   string
	placement ground.Placement
	pod       string         // the backend pod
	port      int            // what the balancer dials on the entry end
	upstream  string         // "10.253.N.2:800K"
	target    netip.AddrPort // where the entry pod forwards to
	local     bool           // the backend shares the entry pod's namespace: REDIRECT, no DNAT
	path      string         // the whole path, for the result
	unreached string         // why the balancer could not reach it ("" when it could)
}

// netState is one network's deployment and its backends.
type netState struct {
	index   int // link number N
	network string
	d       backend.Deployment
	rows    []*row
	servers []*agent.Server
}

// state is what the experiment's units share: the networks built (their
// Prepare registers them), then the balancer (its Prepare links them).
type state struct {
	load    load
	mu      sync.Mutex
	nets    []*netState
	planned []*netState // every network asked for, built or not
	lb      backend.Deployment
	lbNS    string
	logPath string
	offset  int64
	proc    *lab.Proc
}

// Units implements experiment.Experiment: a deployment per network with
// its entry pod c1 and a backend per placement (as the pair experiment
// places them), then the balancer's deployment, whose one cell measures
// every network at once.
func (Blocking) Units(p *experiment.Plan, _ []string) ([]sched.Unit, error) {
	l, err := loadOf(p)
	if err != nil {
		return nil, err
	}
	st := &state{load: l}
	order, byNet := pairs.ByNetwork(p)
	var units []sched.Unit
	for i, net := range order {
		topo, prs := pairs.Topology(net, byNet[net], -1, -1)
		ns := &netState{index: i + 1, network: net}
		for k, pr := range prs {
			ns.rows = append(ns.rows, &row{network: net, placement: pr.Placement, pod: pr.Server,
				port: EntryPort + k, upstream: fmt.Sprintf("%s.%d.2:%d", LinkNet, i+1, EntryPort+k)})
		}
		st.planned = append(st.planned, ns)
		u := sched.Unit{Name: net + " (blocking backends)", Backend: p.Backend, Topology: topo, Skip: result.Skip{Network: net, Workload: Name}}
		u.Prepare = func(ctx context.Context, d backend.Deployment) (func() error, error) {
			return st.prepareNetwork(ctx, d, ns)
		}
		units = append(units, u)
	}
	lbTopo := backend.Topology{Network: result.BaselineNetwork, Hosts: 1, Pods: []backend.PodSpec{
		{Name: "lb", Host: 1, CPU: -1}, {Name: "client", Host: 1, CPU: -1}}}
	u := sched.Unit{Name: "balancer", Backend: p.Backend, Topology: lbTopo, Skip: result.Skip{Network: "balancer", Workload: Name}}
	u.Prepare = st.prepareBalancer
	u.Cells = []sched.Cell{{Name: Name, Run: st.cell}}
	return append(units, u), nil
}

func (l load) serveParams() workload.Params {
	p := l.params(BackendPort)
	delete(p.Extra, "rate")
	delete(p.Extra, "connections")
	return p
}

// prepareNetwork starts a backend server in every backend pod of one
// network and finds where its entry pod forwards to.
func (st *state) prepareNetwork(ctx context.Context, d backend.Deployment, ns *netState) (func() error, error) {
	if _, ok := d.(backend.LocalLab); !ok {
		return nil, backend.Skip("blocking needs the local lab (its balancer links to each network's lab)")
	}
	ns.d = d
	cleanup := func() error {
		for _, s := range ns.servers {
			_, _ = s.Stop()
		}
		ns.servers = nil
		return nil
	}
	entry := d.Pod("c1")
	for _, r := range ns.rows {
		pod := d.Pod(r.pod)
		srv, err := pod.Agent.Serve(ctx, driver, st.load.serveParams())
		if err != nil {
			return cleanup, fmt.Errorf("backend %s of %s: %w", r.pod, ns.network, err)
		}
		ns.servers = append(ns.servers, srv)
		if r.target, err = d.Dial(ctx, "c1", r.pod, "tcp", BackendPort); err != nil {
			return cleanup, err
		}
		how := "DNAT, masquerade"
		r.local = pod.NetNS == entry.NetNS || r.target.Addr().IsLoopback()
		if r.local {
			how = "REDIRECT: the backend shares its namespace"
		}
		r.path = fmt.Sprintf("nginx %s.%d.1 -> %s (entry pod c1, %s, %s) -> %s (%s pod %s, host %d)",
			LinkNet, ns.index, r.upstream, entry.NetNS, how, r.target, ns.network, r.pod, pod.Host)
	}
	st.mu.Lock()
	st.nets = append(st.nets, ns)
	st.mu.Unlock()
	return cleanup, nil
}

// prepareBalancer links every network built to the balancer's pod, checks
// that each backend answers through its link, starts nginx in front of
// them and warms every path up.
func (st *state) prepareBalancer(ctx context.Context, d backend.Deployment) (func() error, error) {
	ll, ok := d.(backend.LocalLab)
	if !ok {
		return nil, backend.Skip("blocking needs the local lab")
	}
	st.mu.Lock()
	nets := append([]*netState(nil), st.nets...)
	st.mu.Unlock()
	if len(nets) == 0 {
		return nil, backend.Skip("no backend network could be built")
	}
	st.lb = d
	st.lbNS = d.Pod("lb").NetNS
	l := ll.LocalLab()
	var ups []string
	for _, ns := range nets {
		if err := st.link(ctx, l, ns); err != nil {
			return nil, fmt.Errorf("linking %s to the balancer: %w", ns.network, err)
		}
		for _, r := range ns.rows {
			ap := netip.MustParseAddrPort(r.upstream)
			if err := httpGetIn(st.lbNS, ap, 3*time.Second); err != nil {
				r.unreached = fmt.Sprintf("the balancer cannot reach %s through %s: %v", r.pod, r.upstream, err)
				continue
			}
			ups = append(ups, r.upstream)
		}
	}
	if len(ups) == 0 {
		return nil, fmt.Errorf("the balancer reaches no backend: %s", nets[0].rows[0].unreached)
	}
	dir := filepath.Join(l.Dir, "nginx-lb")
	argv, err := nginx.WriteProxy(nginx.ProxyOptions{Dir: dir, Port: LBPort, Upstreams: ups})
	if err != nil {
		return nil, err
	}
	st.logPath = filepath.Join(dir, nginx.AccessLog)
	if st.proc, err = l.Start(st.lbNS, "nginx-lb", argv...); err != nil {
		return nil, err
	}
	stop := func() error { st.proc.Stop(); return nil }
	lbAddr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), LBPort)
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := httpGetIn(st.lbNS, lbAddr, time.Second)
		if err == nil {
			break
		}
		select {
		case <-st.proc.Done():
			return stop, fmt.Errorf("nginx exited at start: %s", strings.ReplaceAll(l.LogTail("nginx-lb", 3), "\n", "; "))
		case <-ctx.Done():
			return stop, ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			return stop, fmt.Errorf("the balancer did not answer within 5s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// warm up: every backend a few requests (neighbour tables, first
	// connections), then measure from the end of the log
	for i := 0; i < 3*len(ups); i++ {
		_ = httpGetIn(st.lbNS, lbAddr, time.Second)
	}
	if fi, err := os.Stat(st.logPath); err == nil {
		st.offset = fi.Size()
	}
	return stop, nil
}

// link joins the balancer's namespace to network ns's entry pod:
//
//	ip -n LB link add lbN type veth peer name cnperf-lb netns ENTRY
//	ip -n LB addr add 10.253.N.1/30 dev lbN; ip -n LB link set lbN up
//	ip -n ENTRY addr add 10.253.N.2/30 dev cnperf-lb; ip -n ENTRY link set cnperf-lb up
//	ip netns exec ENTRY sysctl -w net.ipv4.ip_forward=1
//	ip netns exec ENTRY iptables -t nat -A PREROUTING -i cnperf-lb -p tcp --dport 800K -j DNAT --to-destination TARGET
//	    (-j REDIRECT --to-ports PORT when the backend shares the entry's namespace)
//	ip netns exec ENTRY iptables -t nat -A POSTROUTING -s 10.253.N.1 ! -o cnperf-lb -j MASQUERADE
//
// The commands are the balancer lab's (its build record); the veth goes
// with the balancer's namespace, the rules with the entry's.
func (st *state) link(ctx context.Context, l *lab.Lab, ns *netState) error {
	entry := ns.d.Pod("c1").NetNS
	lbDev := "lb" + strconv.Itoa(ns.index)
	lbIP := fmt.Sprintf("%s.%d.1", LinkNet, ns.index)
	inIP := fmt.Sprintf("%s.%d.2", LinkNet, ns.index)
	cmds := [][]string{
		{"ip", "-n", st.lbNS, "link", "add", lbDev, "type", "veth", "peer", "name", LinkDev, "netns", entry},
		{"ip", "-n", st.lbNS, "addr", "add", lbIP + "/30", "dev", lbDev},
		{"ip", "-n", st.lbNS, "link", "set", lbDev, "up"},
		{"ip", "-n", entry, "addr", "add", inIP + "/30", "dev", LinkDev},
		{"ip", "-n", entry, "link", "set", LinkDev, "up"},
		{"ip", "netns", "exec", entry, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"},
	}
	for _, r := range ns.rows {
		rule := []string{"ip", "netns", "exec", entry, "iptables", "-w", "-t", "nat", "-A", "PREROUTING", "-i", LinkDev, "-p", "tcp", "--dport", strconv.Itoa(r.port)}
		if r.local {
			rule = append(rule, "-j", "REDIRECT", "--to-ports", strconv.Itoa(int(r.target.Port())))
		} else {
			rule = append(rule, "-j", "DNAT", "--to-destination", r.target.String())
		}
		cmds = append(cmds, rule)
	}
	cmds = append(cmds, []string{"ip", "netns", "exec", entry, "iptables", "-w", "-t", "nat", "-A", "POSTROUTING", "-s", lbIP, "!", "-o", LinkDev, "-j", "MASQUERADE"})
	for _, c := range cmds {
		if out, err := l.Run(ctx, c...); err != nil {
			return fmt.Errorf("%s: %v %s", strings.Join(c, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// cell is one round: the client sends at the constant rate through the
// balancer for the duration; then the log's lines of the round give every
// backend's times.
func (st *state) cell(ctx context.Context, d backend.Deployment, round int, rec *sched.Recorder) error {
	w, err := workload.Get(driver)
	if err != nil {
		return err
	}
	// lines written since the last round (late answers) are not this round's
	if _, _, next, err := nginx.ReadProxyLog(st.logPath, st.offset); err == nil {
		st.offset = next
	}
	params := st.load.params(LBPort)
	w.Defaults(&params)
	addr, err := d.Dial(ctx, "client", "lb", "tcp", LBPort)
	if err != nil {
		return err
	}
	t0 := time.Now()
	rep, runErr := d.Pod("client").Agent.Run(ctx, driver, params, addr)
	wall := time.Since(t0)
	if err := ctx.Err(); err != nil {
		return err
	}
	var client result.Metrics
	if runErr == nil {
		client, _, runErr = w.Metrics(params, rep, workload.Report{})
	}
	// the last answers: lines appear when a response is complete
	var lines []nginx.ProxyLine
	bad := 0
	quiet := 0
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && quiet < 3; {
		more, b, next, err := nginx.ReadProxyLog(st.logPath, st.offset)
		if err != nil {
			runErr = fmt.Errorf("reading the balancer's log: %w", err)
			break
		}
		st.offset = next
		lines, bad = append(lines, more...), bad+b
		if len(more) == 0 {
			quiet++
		} else {
			quiet = 0
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, r := range st.results(lines, bad, client, runErr, wall, round) {
		rec.Result(r)
	}
	return nil
}

// sample is one row's requests of a round.
type sample struct {
	header, connect, request []float64 // µs, answered requests only
	errors                   int64
}

// results turns a round's log lines into one result per row.
func (st *state) results(lines []nginx.ProxyLine, bad int, client result.Metrics, runErr error, wall time.Duration, round int) []result.Result {
	return st.resultsWith(lines, bad, client, runErr, wall, round, func(ns *netState) map[string]any { return ns.d.Params() })
}

// resultsWith is results with the deployments' params from paramsOf.
func (st *state) resultsWith(lines []nginx.ProxyLine, bad int, client result.Metrics, runErr error, wall time.Duration, round int, paramsOf func(*netState) map[string]any) []result.Result {
	st.mu.Lock()
	nets := append([]*netState(nil), st.nets...)
	st.mu.Unlock()
	by := map[string]*sample{}
	for _, l := range lines {
		s := by[l.Upstream]
		if s == nil {
			s = &sample{}
			by[l.Upstream] = s
		}
		if l.UpstreamStatus != 200 || l.Status != 200 || l.HeaderUs < 0 || l.ConnectUs < 0 {
			s.errors++
			continue
		}
		s.header = append(s.header, float64(l.HeaderUs))
		s.connect = append(s.connect, float64(l.ConnectUs))
		s.request = append(s.request, float64(l.RequestUs))
	}
	total := len(lines)
	var out []result.Result
	base := map[ground.Placement]*sample{}
	for _, ns := range nets {
		if ns.network != result.BaselineNetwork {
			continue
		}
		for _, r := range ns.rows {
			if s := by[r.upstream]; s != nil && len(s.header) > 0 && r.unreached == "" {
				base[r.placement] = s
			}
		}
	}
	for _, ns := range nets {
		for _, r := range ns.rows {
			res := result.Result{
				Network: r.network, Workload: Name, Placement: string(r.placement), Round: round, Path: r.path,
				Params: map[string]any{
					"duration_s": st.load.duration.Seconds(), "rate": st.load.sent, "rate_asked": st.load.rate, "connections": st.load.connections,
					"response_size": st.load.size, "backend_server": st.load.server, "upstream": r.upstream,
					"balancer": "nginx", "backends": countUpstreams(nets),
				},
			}
			for k, v := range paramsOf(ns) {
				res.Params[k] = v
			}
			switch s := by[r.upstream]; {
			case r.unreached != "":
				res.Error = r.unreached
			case runErr != nil:
				res.Error = "client: " + runErr.Error()
			case s == nil || len(s.header) == 0:
				res.Error = fmt.Sprintf("no answered request reached %s (%s) in the balancer's log", r.pod, r.upstream)
				if s != nil {
					res.Error += fmt.Sprintf("; %d failed", s.errors)
				}
			default:
				res.Metrics = metrics(s, base[r.placement], r.network == result.BaselineNetwork, total, wall)
				if bad > 0 {
					res.Metrics.Extra[result.ExtraLogUnparsed] = float64(bad)
				}
				addClient(&res.Metrics, client)
			}
			out = append(out, res)
		}
	}
	return out
}

func countUpstreams(nets []*netState) int {
	n := 0
	for _, ns := range nets {
		for _, r := range ns.rows {
			if r.unreached == "" {
				n++
			}
		}
	}
	return n
}

// metrics are one row's figures; base is the baseline's sample in the
// same placement and round (nil when there is none).
func metrics(s, base *sample, isBase bool, total int, wall time.Duration) result.Metrics {
	n := int64(len(s.header))
	m := result.Metrics{
		Transactions: result.I(n), TransactionsPerS: result.F(float64(n) / wall.Seconds()),
		LatencyUs: map[string]float64{"mean": stats.Mean(s.header), "max": slices.Max(s.header)},
		Extra: map[string]float64{
			result.ExtraConnectMean: stats.Mean(s.connect), ConnectQuantile("max"): slices.Max(s.connect),
			result.ExtraBlockingSE: math.Sqrt(variance(s.header) / float64(n)), result.ExtraLBRequest: stats.Mean(s.request),
			result.ExtraShare: float64(n+s.errors) / float64(max(total, 1)),
		},
		DurationS: result.F(wall.Seconds()),
	}
	if s.errors > 0 {
		m.Errors = result.I(s.errors)
	}
	for _, p := range Percentiles {
		m.LatencyUs[p.Key] = percentile(s.header, p.Q)
		m.Extra[ConnectQuantile(p.Key)] = percentile(s.connect, p.Q)
	}
	if base != nil && !isBase {
		m.Extra[result.ExtraBlockingDiff] = stats.Mean(s.header) - stats.Mean(base.header)
		m.Extra[result.ExtraConnectDiff] = stats.Mean(s.connect) - stats.Mean(base.connect)
		m.Extra[result.ExtraBlockingDiffCI] = 1.96 * math.Sqrt(variance(s.header)/float64(n)+variance(base.header)/float64(len(base.header)))
	}
	return m
}

func addClient(m *result.Metrics, c result.Metrics) {
	if v, ok := c.Value(result.ExtraKey(result.ExtraAchievedRPS)); ok {
		m.Extra[result.ExtraClientRate] = v
	}
	if v, ok := c.LatencyUs["p99"]; ok {
		m.Extra[result.ExtraClientP99] = v
	}
	if v, ok := c.LatencyUs["mean"]; ok {
		m.Extra[result.ExtraClientMean] = v
	}
	if v, ok := c.Extra[result.ExtraSaturated]; ok {
		m.Extra[result.ExtraClientSat] = v
	}
}

// variance is the sample variance (n-1), 0 for fewer than 2.
func variance(xs []float64) float64 { s := stats.StdDev(xs); return s * s }

// percentile is the nearest-rank percentile q (0-100) of xs.
func percentile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	k := int(math.Ceil(q/100*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// Prime is the largest prime at or below n (n >= 2): the rate the client
// really sends at. The open-loop client sends at fixed intervals, and nginx
// logs whole milliseconds: at a round rate (500/s: every 2 ms) every
// request would start at the same phase of nginx's millisecond and the
// whole-ms times would never average out to the true one. At a prime rate
// p the sends fall at p equally spaced phases of the millisecond, every
// one once a second, so the mean of the logged times is the mean of the
// true ones.
func Prime(n int) int {
	for p := n; p > 2; p-- {
		prime := true
		for d := 2; d*d <= p; d++ {
			if p%d == 0 {
				prime = false
				break
			}
		}
		if prime {
			return p
		}
	}
	return 2
}
