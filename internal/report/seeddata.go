package report

import (
	"math"

	"github.com/cnperf/cnperf/internal/result"
)

// The source studies' published numbers, transcribed from the texts kept in
// the project's seeds/ folder (shared/seeds/*.txt), each with where it was
// read. The HTML page sets them beside this run's figures for the same rows
// (seeds.go): relative figures only, as the hardware differs. A number here
// is the study's, as printed; what is derived from it (a ratio) is computed
// in seeds.go, never typed in.
//
// Rows name the cnperf networks that stand for the study's: Flannel aws-vpc
// is cloud-routed, Flannel host-gw and vxlan are host-gw and vxlan, Docker
// --net=host is host, "w/o container" (the same processes without a
// container network) is baseline, Docker's native overlay is
// docker-overlay, Calico BGP and IPIP are calico-bgp and calico-ipip,
// Flannel's UDP backend (flannel 0.5.5's default, the 001 study's version)
// is flannel-udp, Mesos bridge mode (Docker -p: the host NATs to the
// container; seed 002 counts its "本机NAT转发时间", the host's NAT forwarding)
// is nat in every table, TKE's Cilium datapath (DNAT on the pod's own NIC)
// is ebpf-tc.

const (
	seed000 = "seeds/000_31576aa41b70feab.txt"
	seed001 = "seeds/001_9e38378e6043c618.txt"
	seed002 = "seeds/002_ad758885e6dfb4a7.txt"
	seed003 = "seeds/003_8388c508c2291592.txt"
)

// nan marks a value the study does not give.
var nan = math.NaN()

var seed000Percentiles = []SeedColumn{
	{Label: "95 %ile", Metric: "latency_us.p95"},
	{Label: "99 %ile", Metric: "latency_us.p99"},
	{Label: "99.5 %ile", Metric: "latency_us.p99.5"},
	{Label: "99.99 %ile", Metric: "latency_us.p99.99"},
	{Label: "99.999 %ile", Metric: "latency_us.p99.999"},
	{Label: "Max Latency", Metric: "latency_us.max"},
}

// SeedTables is every published table or figure value cnperf can set its
// own results beside.
var SeedTables = []SeedTable{
	{
		ID: "000-4k-20", Source: seed000,
		Cite:  `table "Latency percentiles at 50k RPS (≈20% of maximum RPS), ms", section "50k RPS, 4 KB"`,
		Title: "Constant-rate HTTP to nginx, 4 KB responses, at about 20 % of the maximum rate: latency percentiles",
		Suite: "seed-latency", Form: Absolute, Unit: "ms", Reference: "--net=host",
		Workloads: []string{"http_rate"}, Placement: "cross-host", Step: []string{"load=20%", "size=4096"},
		Columns: seed000Percentiles,
		Rows: []SeedRow{
			{Name: "IPvlan", Networks: []string{"ipvlan"}, Values: []float64{0.6, 0.8, 0.9, 5.7, 9.6, 15.8}},
			{Name: "aws-vpc", Networks: []string{"cloud-routed"}, Values: []float64{0.7, 0.9, 1, 5.6, 9.8, 403.1}},
			{Name: "host-gw", Networks: []string{"host-gw"}, Values: []float64{0.7, 0.9, 1, 7.4, 12, 202.5}},
			{Name: "vxlan", Networks: []string{"vxlan"}, Values: []float64{0.8, 1.1, 1.2, 5.7, 201.5, 402.5}},
			{Name: "--net=host", Networks: []string{"host"}, Values: []float64{0.5, 0.7, 0.7, 6.4, 9.9, 14.8}},
		},
		Note: "The study: vxlan's 99.999 %ile is suspected to come from a bug; 50k RPS is about 20 % of the 4 KB maximum (about 250k RPS), which cnperf's 20 % step of its own maximum stands for.",
	},
	{
		ID: "000-4k-60", Source: seed000,
		Cite:  `table "Latency percentiles at 150k RPS (≈60% of maximum RPS), ms", section "150k RPS, 4 KB"`,
		Title: "Constant-rate HTTP to nginx, 4 KB responses, at about 60 % of the maximum rate: latency percentiles",
		Suite: "seed-latency", Form: Absolute, Unit: "ms", Reference: "--net=host",
		Workloads: []string{"http_rate"}, Placement: "cross-host", Step: []string{"load=60%", "size=4096"},
		Columns: seed000Percentiles,
		Rows: []SeedRow{
			{Name: "IPvlan", Networks: []string{"ipvlan"}, Values: []float64{1, 1.3, 1.5, 5.3, 201.3, 405.7}},
			{Name: "aws-vpc", Networks: []string{"cloud-routed"}, Values: []float64{1.2, 1.5, 1.7, 6, 11.1, 405.1}},
			{Name: "host-gw", Networks: []string{"host-gw"}, Values: []float64{1.2, 1.5, 1.7, 7, 211, 405.3}},
			{Name: "vxlan", Networks: []string{"vxlan"}, Values: []float64{1.4, 1.7, 1.9, 6, 202.51, 406}},
			{Name: "--net=host", Networks: []string{"host"}, Values: []float64{0.9, 1.2, 1.3, 4.2, 9.5, 404.7}},
		},
		Note: "The study: host-gw has a surprisingly poor 99.999 %ile but good lower percentiles.",
	},
	{
		ID: "000-350-20", Source: seed000,
		Cite:  `text of section "50,000 RPS, 350 B" (the chart's values are not in the text)`,
		Title: "Constant-rate HTTP to nginx, 350 B responses, at about 20 % of the maximum rate: the leaderboard (1 = lowest latency)",
		Suite: "seed-latency", Form: Rank,
		Workloads: []string{"http_rate"}, Placement: "cross-host", Step: []string{"load=20%", "size=350"},
		Columns: []SeedColumn{{Label: "latency rank (p99 for cnperf)", Metric: "latency_us.p99"}},
		Rows: []SeedRow{
			{Name: "IPvlan", Networks: []string{"ipvlan"}, Values: []float64{1}},
			{Name: "host-gw", Networks: []string{"host-gw"}, Values: []float64{2}},
			{Name: "aws-vpc", Networks: []string{"cloud-routed"}, Values: []float64{2}},
			{Name: "vxlan", Networks: []string{"vxlan"}, Values: []float64{4}},
		},
		Note: `The study: "IPvlan performs best, host-gw and aws-vpc follow closely, vxlan is the worst".`,
	},
	{
		ID: "001-tcp-256", Source: seed001,
		Cite:  "§IV, containers on several VMs (Fig. 4) and network protocol (Figs. 5-6): TCP throughput at 256 B (sockperf), change against w/o container",
		Title: "Cross-host TCP throughput at 256 B messages, against the same processes without a container network",
		Suite: "default", Form: ChangePct, Unit: "%", Reference: "w/o container",
		Workloads: []string{"tcp_stream"}, Placement: "cross-host", MessageSize: 256,
		Columns: []SeedColumn{{Label: "TCP throughput change", Metric: result.KeyThroughput}},
		Rows: []SeedRow{
			{Name: "Host mode", Networks: []string{"host"}, Values: []float64{0}, Approx: `"close to the baseline" (no number given)`},
			{Name: "NAT", Networks: []string{"nat"}, Values: []float64{-36}},
			{Name: "Calico (BGP)", Networks: []string{"calico-bgp"}, Values: []float64{-39}},
			{Name: "Docker native overlay", Networks: []string{"docker-overlay"}, Values: []float64{-82.8}},
			{Name: "overlays (average)", Networks: []string{"vxlan", "weave", "flannel-udp", "calico-ipip"}, Values: []float64{-82}},
			{Name: "w/o container", Networks: []string{result.BaselineNetwork}, Values: []float64{0}},
		},
		Note: "Docker overlay's -82.8 % is Fig. 4's; the other numbers are the text on Figs. 5-6 at 256 B.",
	},
	{
		ID: "001-udp-256", Source: seed001,
		Cite:  "§IV, network protocol (Figs. 5-6): UDP throughput at 256 B (sockperf), change against w/o container",
		Title: "Cross-host UDP throughput at 256 B messages, against the same processes without a container network",
		Suite: "sizes", Form: ChangePct, Unit: "%", Reference: "w/o container",
		Workloads: []string{"udp_stream"}, Placement: "cross-host", MessageSize: 256,
		Columns: []SeedColumn{{Label: "UDP throughput change", Metric: result.KeyThroughput}},
		Rows: []SeedRow{
			{Name: "NAT", Networks: []string{"nat"}, Values: []float64{-24}},
			{Name: "Calico (BGP)", Networks: []string{"calico-bgp"}, Values: []float64{nan}, Lo: []float64{0}, Approx: `"even rose" (no number given)`},
			{Name: "overlays (average)", Networks: []string{"vxlan", "docker-overlay", "weave", "flannel-udp", "calico-ipip"}, Values: []float64{-38}},
			{Name: "w/o container", Networks: []string{result.BaselineNetwork}, Values: []float64{0}},
		},
	},
	{
		ID: "001-lat-16", Source: seed001,
		Cite:  "§IV, containers on several VMs (Fig. 4): latency at 16 B (sockperf), change against w/o container",
		Title: "Cross-host round-trip latency at 16 B messages, against the same processes without a container network",
		Suite: "default", Form: ChangePct, Unit: "%", Reference: "w/o container",
		Workloads: []string{"tcp_rr"}, Placement: "cross-host", MessageSize: 16,
		Columns: []SeedColumn{{Label: "latency change (cnperf: p50)", Metric: "latency_us.p50"}},
		Rows: []SeedRow{
			{Name: "Host mode", Networks: []string{"host"}, Values: []float64{0}, Approx: `"close to the baseline" (no number given)`},
			{Name: "Docker native overlay", Networks: []string{"docker-overlay"}, Values: []float64{55}},
			{Name: "w/o container", Networks: []string{result.BaselineNetwork}, Values: []float64{0}},
		},
	},
	{
		ID: "001-bulk-1vm", Source: seed001,
		Cite:  "§IV, containers on a single VM (Fig. 3(a)): bulk upload and download (sparkyfish), change against w/o container",
		Title: "Same-host bulk transfer, against the same processes without a container network",
		Suite: "default", Form: ChangePct, Unit: "%", Reference: "w/o container",
		Workloads: []string{"tcp_stream"}, Placement: "same-host",
		Columns: []SeedColumn{
			{Label: "upload", Metric: result.KeyThroughput, Params: map[string]string{"direction": "up"}},
			{Label: "download", Metric: result.KeyThroughput, Params: map[string]string{"direction": "down"}},
		},
		Rows: []SeedRow{
			{Name: "bridge", Networks: []string{"bridge"}, Values: []float64{-18, -30}},
			{Name: "w/o container", Networks: []string{result.BaselineNetwork}, Values: []float64{0, 0}},
		},
		Note: "cnperf's upload is tcp_stream --direction up (the client sends), download --direction down. The study: all other single-host modes came close to the baseline.",
	},
	{
		ID: "001-osu-1vm", Source: seed001,
		Cite:  "§IV, containers on a single VM (Fig. 3(c), (d)): osu_bw and osu_latency over message sizes",
		Title: "Same-host throughput and latency of bridge mode, times w/o container",
		Suite: "default", Form: Times, Unit: "x", Reference: "w/o container",
		Placement: "same-host",
		Columns: []SeedColumn{
			{Label: "throughput (cnperf: tcp_stream)", Metric: result.KeyThroughput, Workload: "tcp_stream"},
			{Label: "latency (cnperf: tcp_rr p50)", Metric: "latency_us.p50", Workload: "tcp_rr"},
		},
		Rows: []SeedRow{
			{Name: "bridge", Networks: []string{"bridge"}, Values: []float64{0.1, 10}, Approx: `"a 10x drop in throughput and rise in latency"`},
			{Name: "w/o container", Networks: []string{result.BaselineNetwork}, Values: []float64{1, 1}},
		},
	},
	{
		ID: "001-alltoall", Source: seed001,
		Cite:  "§IV, scalability (Fig. 9): osu_alltoall at 1024 B, latency across VMs against one VM",
		Title: "All-to-all round time on two hosts against one host (no container network), 1024 B",
		Suite: "scalability", Form: Times, Unit: "x", Reference: "one VM",
		Workloads: []string{"alltoall"},
		Columns:   []SeedColumn{{Label: "round time (cnperf: p50)", Metric: "latency_us.p50"}},
		Rows: []SeedRow{
			{Name: "two VMs, half the processes on each", Networks: []string{result.BaselineNetwork}, Placement: "cross-host", Step: []string{"pods=8", "spread=balanced"}, Values: []float64{10}, Approx: `"about 10 times that of a single VM" (Fig. 9(c) against 9(a); the text gives no process count)`},
			{Name: "one VM", Networks: []string{result.BaselineNetwork}, Placement: "same-host", Step: []string{"pods=8"}, Values: []float64{1}},
		},
		Note: "cnperf compares at 8 pods (the text does not say at how many processes).",
	},
	{
		ID: "001-interference", Source: seed001,
		Cite:  "§IV, interference (Fig. 8): sockperf TCP throughput beside 5 containers each running a busy loop",
		Title: "Throughput beside 5 busy neighbours: who loses least (1 = smallest drop)",
		Suite: "interference", Form: Rank,
		Workloads: []string{"tcp_stream"}, Step: []string{"neighbours=busy:5"},
		Columns: []SeedColumn{{Label: "rank of the drop (cnperf: extra.drop_pct)", Metric: result.ExtraKey(result.ExtraDropPct), Better: result.LowerBetter}},
		Rows: []SeedRow{
			{Name: "w/o container", Networks: []string{result.BaselineNetwork}, Values: []float64{1}},
			{Name: "Host mode", Networks: []string{"host"}, Values: []float64{1}},
			{Name: "Calico (BGP)", Networks: []string{"calico-bgp"}, Values: []float64{1}},
			{Name: "overlays with a user-space daemon", Networks: []string{"weave", "flannel-udp"}, Values: []float64{4}},
		},
		Note: `The text: "Host mode and Calico (BGP) come close to the baseline ... third-party overlays with a user-space daemon are hit hardest"; the figure's values are not in the text.`,
	},
	{
		ID: "001-startup", Source: seed001,
		Cite:  "§IV, network start-up time (Table VI): create command to the first ping reply, mean of 10, against a none-mode container",
		Title: "Network start-up time, times a container with no network",
		Suite: "startup", Form: Times, Unit: "x", Reference: "none mode",
		Workloads: []string{"startup"}, Placement: "cross-host",
		Columns: []SeedColumn{{Label: "start-up time, times none", Metric: result.ExtraKey(result.ExtraVsNoNetwork), IsRatio: true}},
		Rows: []SeedRow{
			{Name: "Docker native overlay", Networks: []string{"docker-overlay"}, Values: []float64{nan}, Lo: []float64{4.5}, Hi: []float64{23}},
			{Name: "Weave", Networks: []string{"weave"}, Values: []float64{nan}, Lo: []float64{4.5}, Hi: []float64{23}},
			{Name: "Flannel", Networks: []string{"flannel-udp"}, Values: []float64{nan}, Lo: []float64{4.5}, Hi: []float64{23}},
			{Name: "Calico (IPIP)", Networks: []string{"calico-ipip"}, Values: []float64{nan}, Lo: []float64{4.5}, Hi: []float64{23}},
			{Name: "Calico (BGP)", Networks: []string{"calico-bgp"}, Values: []float64{nan}, Lo: []float64{4.5}, Hi: []float64{23}},
		},
		Note: `The text gives a range for all overlays and BGP: "4.5 to 23 times the baseline"; Docker overlay "over 10 s, mostly registering in the KV store". cnperf's figure is its own ratio to a pod with no network (extra.vs_no_network), measured in the same round.`,
	},
	{
		ID: "002-overhead", Source: seed002,
		// the table headed 待测机器 / 平均阻塞时间 / Docker本身消耗
		Cite:  "the table of mean blocking time and each setup's own cost (ms), after the test method",
		Title: "Cost of a network as a difference: its latency minus the plain VM's on the same load",
		Suite: "default", Form: Difference, Unit: "ms", Reference: "public cloud VM (reference)",
		Workloads: []string{"tcp_rr"}, Placement: "cross-host",
		Columns: []SeedColumn{{Label: "latency minus the reference (cnperf: tcp_rr p50)", Metric: "latency_us.p50"}},
		Rows: []SeedRow{
			{Name: "K8s flannel vxlan", Networks: []string{"vxlan"}, Values: []float64{6.778}},
			{Name: "K8s flannel host-gw", Networks: []string{"host-gw"}, Values: []float64{3.585}},
			{Name: "Mesos host mode", Networks: []string{"host"}, Values: []float64{12.021}, Outlier: `the study: "host mode took longest, to our surprise; probably a one-off"`},
			{Name: "Mesos bridge mode", Networks: []string{"nat"}, Values: []float64{5.67}},
			{Name: "public cloud VM (reference)", Networks: []string{result.BaselineNetwork}, Values: []float64{0}},
		},
		Note: "The study's latencies are production HTTPS requests through a cloud load balancer (about 640 ms); only the differences and their order carry over.",
	},
	{
		ID: "002-blocking", Source: seed002,
		// the table headed 待测机器 / 平均阻塞时间 / Docker本身消耗
		Cite:  "the table of mean blocking time and each setup's own cost (ms), after the test method",
		Title: "Blocking time behind one balancer: each network's mean minus the plain VM's, the same traffic split over all at once",
		Suite: "blocking", Form: Difference, Unit: "ms", Reference: "public cloud VM (reference)",
		Workloads: []string{"blocking"},
		Columns:   []SeedColumn{{Label: "mean blocking time minus the reference (cnperf: nginx's mean $upstream_header_time, us)", Metric: "latency_us.mean"}},
		Rows: []SeedRow{
			{Name: "K8s flannel vxlan", Networks: []string{"vxlan"}, Values: []float64{6.778}},
			{Name: "K8s flannel host-gw", Networks: []string{"host-gw"}, Values: []float64{3.585}},
			{Name: "Mesos host mode", Networks: []string{"host"}, Values: []float64{12.021}, Outlier: `the study: "host mode took longest, to our surprise; probably a one-off"`},
			{Name: "Mesos bridge mode", Networks: []string{"nat"}, Values: []float64{5.67}},
			{Name: "public cloud VM (reference)", Networks: []string{result.BaselineNetwork}, Values: []float64{0}},
		},
		Note: "cnperf's rows are those of `cnperf run --suite blocking`: one nginx splits the same requests over a backend on every network at once (docs/experiments.md); the one-host row (host) against the baseline on one host, the two-host rows (nat, vxlan, host-gw) against the baseline across two, paired by round. Mesos bridge mode is nat here as in 002-overhead: the study's blocking time for it holds the host's NAT forwarding (Docker -p). The study's times held SSL termination and an application (about 640 ms): only the differences' order carries over.",
	},
	{
		ID: "003-short", Source: seed003,
		// section 性能比较
		Cite:  `section "performance comparison", short connections: Cilium's ClusterIP QPS above iptables and IPVS, in shared-NIC and global-route modes (wrk)`,
		Title: "ClusterIP with short connections: requests/s of each load balancer against Cilium eBPF",
		Suite: "clusterip", Form: RefGainPct, Unit: "%", Reference: "Cilium eBPF",
		Workloads: []string{"tcp_crr", "http_qps"}, Placement: "cross-host", Conn: "short", Services: 1,
		Columns: []SeedColumn{
			{Label: "shared-NIC mode", Metric: result.KeyTransactions},
			{Label: "global-route mode", Metric: result.KeyTransactions},
		},
		Rows: []SeedRow{
			{Name: "iptables", Networks: []string{"host-gw"}, LB: "iptables", Values: []float64{48, 62}},
			{Name: "IPVS", Networks: []string{"host-gw"}, LB: "ipvs", Values: []float64{74, 91}},
			{Name: "Cilium eBPF", Networks: []string{"host-gw"}, LB: "ebpf-tc", Values: []float64{0, 0}},
		},
		Note: `The study: "iptables beats IPVS because the test had few services; IPVS's advantage is with many". cnperf compares at 1 service.`,
	},
	{
		ID: "003-long", Source: seed003,
		// section 性能比较
		Cite:  `section "performance comparison", long connections: Cilium's ClusterIP QPS above iptables and IPVS, in shared-NIC and global-route modes (wrk)`,
		Title: "ClusterIP with long connections: requests/s of each load balancer against Cilium eBPF",
		Suite: "clusterip", Form: RefGainPct, Unit: "%", Reference: "Cilium eBPF",
		Workloads: []string{"tcp_rr", "http_qps"}, Placement: "cross-host", Conn: "long", Services: 1,
		Columns: []SeedColumn{
			{Label: "shared-NIC mode", Metric: result.KeyTransactions},
			{Label: "global-route mode", Metric: result.KeyTransactions},
		},
		Rows: []SeedRow{
			{Name: "iptables", Networks: []string{"host-gw"}, LB: "iptables", Values: []float64{33, 49}},
			{Name: "IPVS", Networks: []string{"host-gw"}, LB: "ipvs", Values: []float64{57, 66}},
			{Name: "Cilium eBPF", Networks: []string{"host-gw"}, LB: "ebpf-tc", Values: []float64{0, 0}},
		},
	},
	{
		ID: "003-many", Source: seed003,
		// section 性能比较
		Cite:  `section "performance comparison": "IPVS's advantage is in scenarios with many services"`,
		Title: "ClusterIP with many services: IPVS ahead of iptables (1 = higher requests/s)",
		Suite: "clusterip", Form: Rank,
		Workloads: []string{"tcp_crr", "tcp_rr", "http_qps"}, Placement: "cross-host", Services: MostServices,
		Columns: []SeedColumn{{Label: "rank at the most services", Metric: result.KeyTransactions}},
		Rows: []SeedRow{
			{Name: "IPVS", Networks: []string{"host-gw"}, LB: "ipvs", Values: []float64{1}},
			{Name: "iptables", Networks: []string{"host-gw"}, LB: "iptables", Values: []float64{2}},
		},
		Note: "A claim of the text, not a measured figure of the study.",
	},
}
