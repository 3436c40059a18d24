package result

import (
	"strings"
)

// Better says which direction of a figure is an improvement.
type Better string

// The directions.
const (
	HigherBetter Better = "higher"
	LowerBetter  Better = "lower"
)

// FigureKind is what a figure measures; reports lay figures out by kind.
type FigureKind string

// The kinds.
const (
	KindRate    FigureKind = "rate"    // per second: transactions, bits
	KindLatency FigureKind = "latency" // a point of a latency distribution
	KindBytes   FigureKind = "bytes"   // an amount
	KindCost    FigureKind = "cost"    // CPU per transaction or per byte
	KindTime    FigureKind = "time"    // a duration (start-up, sync)
	KindRatio   FigureKind = "ratio"   // loss, fairness
	KindCount   FigureKind = "count"   // a number of things: samples, errors
	KindFlag    FigureKind = "flag"    // 1 yes, 0 no (saturated)
)

// Figure describes one headline number of a workload: where it sits in
// Metrics (Key, see Value), how to print it and which way is better.
// Workloads declare theirs; the table, CSV and HTML report read these
// declarations instead of switching on workload names.
type Figure struct {
	Key    string     `json:"key"`   // e.g. "transactions_per_s", "latency_us.p99"
	Label  string     `json:"label"` // column heading, e.g. "trans/s"
	Unit   string     `json:"unit"`  // unit after Scale, e.g. "Gbit/s"
	Scale  float64    `json:"scale"` // displayed = value / Scale (0 means 1)
	Better Better     `json:"better"`
	Kind   FigureKind `json:"kind"`
	// Ratio asks for the figure's ratio to the baseline beside it: a
	// workload's main figure (its rate, its start-up time).
	Ratio bool `json:"ratio,omitempty"`
	// ZeroIfAbsent is for counters written only when non-zero (errors):
	// absent reads as 0, not as "not measured".
	ZeroIfAbsent bool `json:"zero_if_absent,omitempty"`
}

// Display converts a raw value to the figure's unit.
func (f Figure) Display(v float64) float64 {
	if f.Scale == 0 {
		return v
	}
	return v / f.Scale
}

// Metric keys of the typed fields; map fields take "name.key", e.g.
// "latency_us.p99", "extra.saturated", "startup_ms.mean", "cpu.ns_per_byte".
const (
	KeyThroughput   = "throughput_bps"
	KeyTransactions = "transactions_per_s"
	KeyLoss         = "loss_ratio"
	KeyDuration     = "duration_s"
	KeyClientCPU    = "client_cpu_s_per_s"
	KeyServerCPU    = "server_cpu_s_per_s"
	KeyErrors       = "errors"
)

// Common figures, shared by the workloads that report them.
var (
	FigThroughput   = Figure{Key: KeyThroughput, Label: "Gbit/s", Unit: "Gbit/s", Scale: 1e9, Better: HigherBetter, Kind: KindRate, Ratio: true}
	FigTransactions = Figure{Key: KeyTransactions, Label: "trans/s", Unit: "1/s", Better: HigherBetter, Kind: KindRate, Ratio: true}
	FigP50          = Figure{Key: "latency_us.p50", Label: "p50 us", Unit: "us", Better: LowerBetter, Kind: KindLatency}
	FigP99          = Figure{Key: "latency_us.p99", Label: "p99 us", Unit: "us", Better: LowerBetter, Kind: KindLatency}
	FigLoss         = Figure{Key: KeyLoss, Label: "loss %", Unit: "%", Scale: 0.01, Better: LowerBetter, Kind: KindRatio}
	// The cell's own CPU (agents, daemons, ksoftirqd): on a shared machine
	// the machine's figure counts other work too (result.CPUCost).
	FigCPUPerTrans = Figure{Key: "cpu.cell_us_per_trans", Label: "CPU us/trans", Unit: "us", Better: LowerBetter, Kind: KindCost}
	FigCPUPerByte  = Figure{Key: "cpu.cell_ns_per_byte", Label: "CPU ns/B", Unit: "ns", Better: LowerBetter, Kind: KindCost}
)

// FigLatency is the latency percentile (or "max", "mean") named q, in µs.
func FigLatency(q string) Figure {
	return Figure{Key: "latency_us." + q, Label: q + " us", Unit: "us", Better: LowerBetter, Kind: KindLatency}
}

// Value reads the metric named key; ok is false when it is absent.
func (m Metrics) Value(key string) (v float64, ok bool) {
	deref := func(p *float64) (float64, bool) {
		if p == nil {
			return 0, false
		}
		return *p, true
	}
	derefI := func(p *int64) (float64, bool) {
		if p == nil {
			return 0, false
		}
		return float64(*p), true
	}
	switch key {
	case KeyThroughput:
		return deref(m.ThroughputBps)
	case KeyTransactions:
		return deref(m.TransactionsPerS)
	case KeyLoss:
		return deref(m.LossRatio)
	case KeyDuration:
		return deref(m.DurationS)
	case KeyClientCPU:
		return deref(m.ClientCPUSPerS)
	case KeyServerCPU:
		return deref(m.ServerCPUSPerS)
	case "transactions":
		return derefI(m.Transactions)
	case "bytes":
		return derefI(m.Bytes)
	case "messages":
		return derefI(m.Messages)
	case KeyErrors:
		return derefI(m.Errors)
	}
	group, name, found := strings.Cut(key, ".")
	if !found {
		return 0, false
	}
	var mp map[string]float64
	switch group {
	case "latency_us":
		mp = m.LatencyUs
	case "extra":
		mp = m.Extra
	case "startup_ms":
		mp = m.StartupMs
	case "phases_ms":
		mp = m.PhasesMs
	case "cpu":
		if m.CPU == nil {
			return 0, false
		}
		return m.CPU.value(name)
	default:
		return 0, false
	}
	v, ok = mp[name]
	return v, ok
}

// The reference rows every comparison is read against.
const (
	// BaselineNetwork is the row with no container network: every figure's
	// ratio is to it, in the same placement.
	BaselineNetwork = "baseline"
	// ReferenceLB is the services row that dials a backend's pod IP, with
	// no load balancer.
	ReferenceLB = "none"
)

// StudyLBs are the load balancers seed 003 states its findings against
// ("eBPF beat iptables by 33-62 % and IPVS by 57-91 %"): service results
// carry their % difference to each (ExtraVsLB).
var StudyLBs = []string{"iptables", "ipvs"}

// AboveOne says what a ratio of this figure above 1 means, by its
// direction: "faster/more" where higher is better (a rate), "slower/longer"
// where lower is better and it is a time, "more, worse" for another
// lower-is-better figure (a cost, a loss). A figure without a direction
// gets "higher".
func (f Figure) AboveOne() string {
	switch {
	case f.Better == HigherBetter:
		return "faster/more"
	case f.Better == LowerBetter && (f.Kind == KindTime || f.Kind == KindLatency):
		return "slower/longer"
	case f.Better == LowerBetter:
		return "more, worse"
	}
	return "higher"
}
