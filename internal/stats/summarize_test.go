package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// res makes a tcp_rr-like result: transactions/s and p99.
func res(network, placement string, round int, tps, p99 float64) result.Result {
	return result.Result{Network: network, Workload: "tcp_rr", Placement: placement, Round: round,
		Metrics: result.Metrics{TransactionsPerS: result.F(tps), LatencyUs: map[string]float64{"p99": p99}}}
}

func failed(network, placement string, round int) result.Result {
	return result.Result{Network: network, Workload: "tcp_rr", Placement: placement, Round: round, Error: "agent: connection refused\nmore"}
}

// rounds makes n rounds of a cell, the i-th round's value scaled by drift[i].
func rounds(network string, tps, p99 float64, drift []float64) []result.Result {
	var out []result.Result
	for i, d := range drift {
		out = append(out, res(network, "same-host", i+1, tps*d, p99/d))
	}
	return out
}

var calm = []float64{1, 1.01, 0.99, 1.02, 0.98}

func key(network string) result.CellKey {
	return result.CellKey{Network: network, Workload: "tcp_rr", Placement: "same-host"}
}

func find(sums []result.Summary, k result.CellKey, fig string) *result.Summary {
	for i := range sums {
		if sums[i].Cell == k && sums[i].Figure == fig {
			return &sums[i]
		}
	}
	return nil
}

func TestSummarize(t *testing.T) {
	type want struct {
		cell      result.CellKey
		fig       string
		n         int
		median    float64
		method    string
		vs        *result.CellKey // nil: no comparison
		vsN       int
		test      string // prefix
		verdict   string
		ratioNear float64
		noSummary bool
	}
	bl, br := key("baseline"), key("bridge")
	cases := []struct {
		name     string
		results  []result.Result
		figures  func(string) []result.Figure
		warnings []string // prefixes, in order
		want     []want
	}{
		{
			name: "five rounds: bridge slower, paired by round",
			results: append(rounds("baseline", 90000, 14, calm),
				rounds("bridge", 80000, 18, calm)...),
			want: []want{
				{cell: bl, fig: result.KeyTransactions, n: 5, median: 90000, method: MethodLogT},
				{cell: br, fig: result.KeyTransactions, n: 5, median: 80000, method: MethodLogT, vs: &bl, vsN: 5, test: TestPaired, verdict: "differs worse", ratioNear: 80.0 / 90},
				{cell: br, fig: "latency_us.p99", n: 5, median: 18, method: MethodLogT, vs: &bl, vsN: 5, test: TestPaired, verdict: "differs worse", ratioNear: 18.0 / 14},
				{cell: br, fig: result.KeyThroughput, noSummary: true},
			},
		},
		{
			name: "drift shared by both cells cancels in the pairs",
			results: append(rounds("baseline", 90000, 14, []float64{1, 1.2, 0.8, 1.1, 0.9}),
				rounds("bridge", 85000, 15, []float64{1, 1.2, 0.8, 1.1, 0.9})...),
			warnings: []string{WarnNoisy},
			want: []want{
				{cell: br, fig: result.KeyTransactions, n: 5, median: 85000, method: MethodLogT, vs: &bl, vsN: 5, test: TestPaired, verdict: "differs worse", ratioNear: 85.0 / 90},
			},
		},
		{
			name:    "old file: no rounds, one result per cell",
			results: []result.Result{res("baseline", "same-host", 0, 90000, 14), res("bridge", "same-host", 0, 80000, 18)},
			want: []want{
				{cell: bl, fig: result.KeyTransactions, n: 1, median: 90000, method: MethodNone},
				{cell: br, fig: result.KeyTransactions, n: 1, median: 80000, method: MethodNone, vs: &bl, vsN: 1, test: "none", verdict: Undecided, ratioNear: 80.0 / 90},
			},
		},
		{
			name: "old file with --repeat: unpaired",
			results: []result.Result{
				res("baseline", "same-host", 0, 90000, 14), res("baseline", "same-host", 0, 91000, 14), res("baseline", "same-host", 0, 89000, 14),
				res("bridge", "same-host", 0, 70000, 18), res("bridge", "same-host", 0, 71000, 18), res("bridge", "same-host", 0, 69000, 18),
			},
			want: []want{
				{cell: br, fig: result.KeyTransactions, n: 3, median: 70000, method: MethodLogT, vs: &bl, vsN: 3, test: TestWelch, verdict: "differs worse", ratioNear: 70.0 / 90},
			},
		},
		{
			name: "a failed round: only the rounds both have are paired",
			results: append(rounds("baseline", 90000, 14, calm), []result.Result{
				res("bridge", "same-host", 1, 80000, 18), res("bridge", "same-host", 2, 80500, 18),
				failed("bridge", "same-host", 3), res("bridge", "same-host", 4, 81000, 18),
				res("bridge", "same-host", 5, 79000, 18), failed("host", "same-host", 1),
			}...),
			warnings: []string{WarnFailed + "bridge same-host tcp_rr failed in 1 of 5 rounds (first: agent: connection refused); its figures are over the 4",
				WarnFailed + "host same-host tcp_rr failed in 1 of 1 rounds (first: agent: connection refused); it has no figures"},
			want: []want{
				{cell: br, fig: result.KeyTransactions, n: 4, median: 80250, method: MethodLogT, vs: &bl, vsN: 4, test: TestPaired, verdict: "differs worse", ratioNear: 0.89},
				{cell: key("host"), fig: result.KeyTransactions, noSummary: true},
			},
		},
		{
			name:    "missing baseline",
			results: rounds("bridge", 80000, 18, calm),
			want:    []want{{cell: br, fig: result.KeyTransactions, n: 5, median: 80000, method: MethodLogT}},
		},
		{
			name:     "noisy baseline",
			results:  append(rounds("baseline", 90000, 14, []float64{1, 1.3, 0.75, 1.1, 0.95}), rounds("bridge", 80000, 18, calm)...),
			warnings: []string{WarnNoisy + "the reference's spread between rounds is not shown to be below 10 %: it may be as large as 47 % (the 95 % upper bound of the CV of trans/s of baseline same-host tcp_rr, 19.8 % over 5 rounds)"},
			want: []want{
				{cell: br, fig: result.KeyTransactions, n: 5, median: 80000, method: MethodLogT, vs: &bl, vsN: 5, test: TestPaired, verdict: Undecided, ratioNear: 0.88},
			},
		},
		{
			name: "custom figure, lower is better",
			results: []result.Result{
				{Network: "baseline", Workload: "w", Placement: "cross-host", Round: 1, Metrics: result.Metrics{Extra: map[string]float64{"lag": 10}}},
				{Network: "baseline", Workload: "w", Placement: "cross-host", Round: 2, Metrics: result.Metrics{Extra: map[string]float64{"lag": 10.2}}},
				{Network: "vxlan", Workload: "w", Placement: "cross-host", Round: 1, Metrics: result.Metrics{Extra: map[string]float64{"lag": 5}}},
				{Network: "vxlan", Workload: "w", Placement: "cross-host", Round: 2, Metrics: result.Metrics{Extra: map[string]float64{"lag": 5.1}}},
			},
			figures: func(w string) []result.Figure {
				return []result.Figure{{Key: "extra.lag", Label: "lag", Better: result.LowerBetter, Kind: result.KindTime}}
			},
			want: []want{{
				cell: result.CellKey{Network: "vxlan", Workload: "w", Placement: "cross-host"}, fig: "extra.lag", n: 2, median: 5.05, method: MethodLogT,
				vs: &result.CellKey{Network: "baseline", Workload: "w", Placement: "cross-host"}, vsN: 2, test: TestPaired, verdict: "differs better", ratioNear: 0.5,
			}},
		},
		{
			name: "zero values: a summary, no ratio",
			results: []result.Result{
				{Network: "baseline", Workload: "udp", Placement: "same-host", Round: 1, Metrics: result.Metrics{LossRatio: result.F(0)}},
				{Network: "baseline", Workload: "udp", Placement: "same-host", Round: 2, Metrics: result.Metrics{LossRatio: result.F(0)}},
				{Network: "bridge", Workload: "udp", Placement: "same-host", Round: 1, Metrics: result.Metrics{LossRatio: result.F(0.01)}},
				{Network: "bridge", Workload: "udp", Placement: "same-host", Round: 2, Metrics: result.Metrics{LossRatio: result.F(0)}},
			},
			figures: func(string) []result.Figure { return []result.Figure{result.FigLoss} },
			want:    []want{{cell: result.CellKey{Network: "bridge", Workload: "udp", Placement: "same-host"}, fig: result.KeyLoss, n: 2, median: 0.005, method: MethodT}},
		},
		{
			name:     "all errored",
			results:  []result.Result{failed("baseline", "same-host", 1)},
			warnings: []string{WarnFailed},
		},
		{name: "empty run"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := &result.Run{Schema: result.Schema, Results: c.results, Warnings: []string{"kept: not Summarize's"}}
			for range 2 { // a second call replaces, never duplicates
				Summarize(run, c.figures)
			}
			if len(run.Warnings) == 0 || run.Warnings[0] != "kept: not Summarize's" {
				t.Fatalf("warnings %q: the caller's warning is gone", run.Warnings)
			}
			got := run.Warnings[1:]
			if len(got) != len(c.warnings) {
				t.Fatalf("warnings %q, want %d starting %q", got, len(c.warnings), c.warnings)
			}
			for i, w := range c.warnings {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("warning %q, want it to start %q", got[i], w)
				}
			}
			for _, w := range c.want {
				s := find(run.Summaries, w.cell, w.fig)
				if w.noSummary {
					if s != nil {
						t.Errorf("%v %s: unexpected summary %+v", w.cell, w.fig, *s)
					}
					continue
				}
				if s == nil {
					t.Fatalf("%v %s: no summary in %+v", w.cell, w.fig, run.Summaries)
				}
				if s.N != w.n || math.Abs(s.Median-w.median) > 1e-9*w.median || s.CIMethod != w.method {
					t.Errorf("%v %s: n %d median %g method %s, want %d %g %s", w.cell, w.fig, s.N, s.Median, s.CIMethod, w.n, w.median, w.method)
				}
				if (s.CILevel == 0) != (w.method == MethodNone) || (s.CILevel != 0 && !(s.CILow <= s.Median && s.Median <= s.CIHigh)) {
					t.Errorf("%v %s: interval [%g, %g] at %g around %g", w.cell, w.fig, s.CILow, s.CIHigh, s.CILevel, s.Median)
				}
				if w.vs == nil {
					if s.VsBaseline != nil {
						t.Errorf("%v %s: unexpected comparison %+v", w.cell, w.fig, *s.VsBaseline)
					}
					continue
				}
				v := s.VsBaseline
				if v == nil {
					t.Fatalf("%v %s: no comparison", w.cell, w.fig)
				}
				verdict := v.Verdict
				if verdict == Differs {
					verdict += " " + v.Direction
				}
				if v.Against != *w.vs || v.N != w.vsN || !strings.HasPrefix(v.Test, w.test) || verdict != w.verdict || math.Abs(v.Ratio-w.ratioNear) > 0.01 {
					t.Errorf("%v %s: comparison %+v, want against %v n %d test %q verdict %s ratio ≈%.3f", w.cell, w.fig, *v, *w.vs, w.vsN, w.test, w.verdict, w.ratioNear)
				}
			}
			if _, err := json.Marshal(run); err != nil {
				t.Fatalf("the summarized run does not encode: %v", err)
			}
		})
	}
	Summarize(nil, nil) // no panic
}

func TestReference(t *testing.T) {
	cases := []struct {
		in   result.CellKey
		want result.CellKey
		ok   bool
	}{
		{result.CellKey{Network: "vxlan", Workload: "tcp_rr", Placement: "cross-host", Step: "rate=1000"},
			result.CellKey{Network: "baseline", Workload: "tcp_rr", Placement: "cross-host", Step: "rate=1000"}, true},
		{result.CellKey{Network: "baseline", Workload: "tcp_rr", Placement: "cross-host"}, result.CellKey{}, false},
		{result.CellKey{Network: "vxlan", Workload: "http_qps", Placement: "cross-host", LB: "ipvs", Services: 100, Step: "services=100 keepalive=true"},
			result.CellKey{Network: "vxlan", Workload: "http_qps", Placement: "cross-host", LB: "none", Step: "keepalive=true"}, true},
		{result.CellKey{Network: "vxlan", Workload: "tcp_rr", Placement: "cross-host", LB: "iptables", Services: 1, Step: "services=1"},
			result.CellKey{Network: "vxlan", Workload: "tcp_rr", Placement: "cross-host", LB: "none"}, true},
		{result.CellKey{Network: "vxlan", Workload: "tcp_rr", Placement: "cross-host", LB: "none"}, result.CellKey{}, false},
	}
	for _, c := range cases {
		got, ok := Reference(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Reference(%v) = %v %v, want %v %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestSummarizeServices(t *testing.T) {
	mk := func(lb string, n int, step string, round int, tps float64) result.Result {
		return result.Result{Network: "vxlan", Workload: "tcp_crr", Placement: "cross-host", LB: lb, Services: n, Step: step, Round: round,
			Metrics: result.Metrics{TransactionsPerS: result.F(tps)}}
	}
	run := &result.Run{}
	for r := 1; r <= 3; r++ {
		run.Results = append(run.Results, mk("none", 0, "", r, 10000+float64(r)), mk("iptables", 1000, "services=1000", r, 6000+float64(r)))
	}
	Summarize(run, nil)
	s := find(run.Summaries, result.CellKey{Network: "vxlan", Workload: "tcp_crr", Placement: "cross-host", LB: "iptables", Services: 1000, Step: "services=1000"}, result.KeyTransactions)
	if s == nil || s.VsBaseline == nil || s.VsBaseline.Against.LB != "none" || s.VsBaseline.N != 3 || s.VsBaseline.Verdict != Differs || s.VsBaseline.Direction != Worse {
		t.Fatalf("services summary %+v", s)
	}
}

// TestSummarizeReplica: a cell of another backend is compared with the
// lab's cell of the same network, paired by round; with the lab's in
// another placement when that is the only one; a lab cell with nothing.
func TestSummarizeReplica(t *testing.T) {
	on := func(be string, rs []result.Result) []result.Result {
		for i := range rs {
			rs[i].Backend = be
		}
		return rs
	}
	cross := func(rs []result.Result) []result.Result {
		for i := range rs {
			rs[i].Placement = "cross-host"
		}
		return rs
	}
	for _, tc := range []struct {
		name      string
		results   []result.Result
		wantRatio float64 // 0: no comparison
		against   string  // placement of the lab cell compared with
	}{
		{"same cell", append(rounds("bridge", 1000, 100, calm), on("docker", rounds("bridge", 500, 200, calm))...), 0.5, "same-host"},
		{"other placement", append(cross(rounds("nat", 1000, 100, calm)), on("docker", rounds("nat", 250, 400, calm))...), 0.25, "cross-host"},
		{"no replica", on("docker", rounds("bridge", 500, 200, calm)), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := &result.Run{Results: tc.results}
			Summarize(run, nil)
			var real, lab *result.Summary
			for i := range run.Summaries {
				s := &run.Summaries[i]
				if s.Figure != result.KeyTransactions {
					continue
				}
				if s.Cell.Backend == "docker" {
					real = s
				} else {
					lab = s
				}
			}
			if real == nil {
				t.Fatal("no summary of the docker cell")
			}
			if lab != nil && lab.VsReplica != nil {
				t.Errorf("the lab cell has a replica comparison: %+v", lab.VsReplica)
			}
			if tc.wantRatio == 0 {
				if real.VsReplica != nil {
					t.Errorf("compared with %+v, want nothing", real.VsReplica.Against)
				}
				return
			}
			c := real.VsReplica
			if c == nil {
				t.Fatal("no replica comparison")
			}
			if math.Abs(c.Ratio-tc.wantRatio) > 0.01 || !c.Significant || c.Against.Backend != "" || c.Against.Placement != tc.against {
				t.Errorf("replica comparison %.3f significant=%v against %+v; want %.2f against the lab's %s", c.Ratio, c.Significant, c.Against, tc.wantRatio, tc.against)
			}
		})
	}
}

// TestBusyWarning: other work that keeps CPUs busy is warned about even
// when it is steady (no spread between rounds); cnperf's own agents and
// daemons are not other work.
func ksoft(r result.Result, s float64) result.Result {
	r.Metrics.CPU.KSoftirqdS = &s
	return r
}

func TestBusyWarning(t *testing.T) {
	res := func(machine, agents, daemonPerS float64) result.Result {
		r := result.Result{Network: "host", Workload: "tcp_rr", Placement: "cross-host", Round: 1,
			Metrics: result.Metrics{TransactionsPerS: result.F(1000),
				CPU: &result.CPUCost{WallS: 2, MachineS: machine, AgentsS: agents}}}
		if daemonPerS > 0 {
			r.Metrics.Extra = map[string]float64{result.ExtraDaemonCPU: daemonPerS}
		}
		return r
	}
	for _, c := range []struct {
		name      string
		rs        []result.Result
		autogroup string
		warn      bool
		hint      bool
	}{
		{"idle", []result.Result{res(2.0, 2.1, 0), res(3.6, 3.5, 0), res(2.0, 2.0, 0)}, "1", false, false},
		{"daemons", []result.Result{res(3.9, 1.4, 1.2), res(3.8, 1.5, 1.1), res(3.9, 1.5, 1.2)}, "", false, false},
		{"hog", []result.Result{res(4.0, 2.0, 0), res(4.0, 2.2, 0), res(4.0, 2.7, 0)}, "0", true, false},
		{"hog, autogroup", []result.Result{res(4.0, 2.0, 0), res(4.0, 2.2, 0), res(4.0, 2.7, 0)}, "1", true, true},
		{"no cpu figures", []result.Result{{Network: "host", Workload: "tcp_rr", Round: 1}}, "1", false, false},
		// the cell's own ksoftirqd work is the cell's, not other work's
		{"ksoftirqd", []result.Result{ksoft(res(4.0, 2.0, 0), 1.8), ksoft(res(4.0, 2.2, 0), 1.7), ksoft(res(4.0, 2.1, 0), 1.8)}, "0", false, false},
	} {
		run := &result.Run{Results: c.rs}
		if c.autogroup != "" {
			run.Environment.Sysctls = map[string]string{AutogroupSysctl: c.autogroup}
		}
		Summarize(run, nil)
		got, hint := false, false
		for _, w := range run.Warnings {
			if strings.HasPrefix(w, WarnBusy) {
				got, hint = true, strings.Contains(w, AutogroupSysctl+"=0")
			}
		}
		if got != c.warn || hint != c.hint {
			t.Errorf("%s: busy warning %v (autogroup hint %v), want %v (%v): %q", c.name, got, hint, c.warn, c.hint, run.Warnings)
		}
	}
}

// TestSummarizeServiceReplica: a cluster's service cell is compared with
// the lab's replica of its kube-proxy mode (the environment names it) at
// the same service count and placement, whatever the lab's network; its
// pod-IP cell with the lab's pod IP; with two replicas and no mode known,
// nothing (ambiguous).
func TestSummarizeServiceReplica(t *testing.T) {
	svcRounds := func(be, network, lb string, n int, tps float64) []result.Result {
		rs := rounds(network, tps, 100, calm)
		for i := range rs {
			rs[i].Backend, rs[i].LB, rs[i].Services, rs[i].Placement = be, lb, n, "cross-host"
			if n > 0 {
				rs[i].Step = fmt.Sprintf("services=%d", n)
			}
		}
		return rs
	}
	var rs []result.Result
	rs = append(rs, svcRounds("", "host-gw", "none", 0, 1000)...)
	rs = append(rs, svcRounds("", "host-gw", "iptables", 1, 800)...)
	rs = append(rs, svcRounds("", "host-gw", "iptables", 10000, 400)...)
	rs = append(rs, svcRounds("", "host-gw", "nftables", 10000, 700)...)
	rs = append(rs, svcRounds("kubernetes", "pod", "none", 0, 500)...)
	rs = append(rs, svcRounds("kubernetes", "pod", "cluster", 1, 200)...)
	rs = append(rs, svcRounds("kubernetes", "pod", "cluster", 10000, 200)...)
	for _, tc := range []struct {
		mode    string
		lb      string
		n       int
		ratio   float64 // 0: none
		against string
	}{
		{"kube-proxy iptables", "none", 0, 0.5, "none"},
		{"kube-proxy iptables", "cluster", 1, 0.25, "iptables"},
		{"kube-proxy iptables", "cluster", 10000, 0.5, "iptables"},
		{"kube-proxy nftables", "cluster", 10000, 200.0 / 700, "nftables"},
		{"", "cluster", 1, 0.25, "iptables"}, // not known: the only replica at 1
		{"", "cluster", 10000, 0, ""},        // two: ambiguous
	} {
		// the lab's parts declare what they replicate; the cluster's
		// service proxy is tc.mode
		run := &result.Run{Results: append([]result.Result(nil), rs...),
			Environment: result.Environment{
				Replicas:   map[string]string{"lb:iptables": "kube-proxy iptables", "lb:nftables": "kube-proxy nftables"},
				Kubernetes: &result.Kubernetes{Systems: map[string]string{result.SystemServiceProxy: tc.mode}}}}
		Summarize(run, nil)
		k := result.CellKey{Network: "pod", Workload: "tcp_rr", Placement: "cross-host", LB: tc.lb, Services: tc.n, Backend: "kubernetes"}
		if tc.n > 0 {
			k.Step = fmt.Sprintf("services=%d", tc.n)
		}
		s := find(run.Summaries, k, result.KeyTransactions)
		if s == nil {
			t.Fatalf("%s: no summary of %+v", tc.mode, k)
		}
		c := s.VsReplica
		switch {
		case tc.ratio == 0 && c != nil:
			t.Errorf("%s lb=%s %d: compared with %+v, want nothing", tc.mode, tc.lb, tc.n, c.Against)
		case tc.ratio != 0 && c == nil:
			t.Errorf("%s lb=%s %d: no replica comparison", tc.mode, tc.lb, tc.n)
		case c != nil && (math.Abs(c.Ratio-tc.ratio) > 0.01 || c.Against.LB != tc.against || c.Against.Network != "host-gw" || c.Against.Services != tc.n):
			t.Errorf("%s lb=%s %d: %.3f against %+v; want %.3f against host-gw lb=%s", tc.mode, tc.lb, tc.n, c.Ratio, c.Against, tc.ratio, tc.against)
		}
	}
}

// TestServiceReferenceOnItsBackend: a cluster's service cell is compared
// with the cluster's own pod IP, not with nothing (the reference key kept
// the backend out, so a kubernetes row had no ratio in a lab,kubernetes run).
func TestServiceReferenceOnItsBackend(t *testing.T) {
	k := result.CellKey{Network: "pod", Workload: "tcp_crr", Placement: "cross-host", LB: "cluster", Services: 1, Step: "services=1", Backend: "kubernetes"}
	ref, ok := Reference(k)
	if !ok || ref.Backend != "kubernetes" || ref.LB != "none" || ref.Step != "" {
		t.Errorf("reference %+v (ok %v), want the kubernetes pod IP", ref, ok)
	}
}
