package result

// MachineSpeed is how fast this machine ran one cell: probes of its CPUs
// just before and just after the measured interval (never inside it), the
// CPU time the hypervisor took over it, and the share of the machine other
// work left to the cell. On a virtual machine the same cell can run at half
// the speed from one round to the next (the host's other tenants, where it
// placed the virtual CPUs); a ratio between two cells measured at different
// speeds says nothing about the networks. Recorded where the cell's pods
// share this machine's kernel (the lab and Docker backends).
type MachineSpeed struct {
	Before *SpeedProbe `json:"before,omitempty"`
	After  *SpeedProbe `json:"after,omitempty"`
	// StealS is, per CPU (in the order of Before.CPUs), the seconds the
	// hypervisor ran something else while the cell ran (/proc/stat steal).
	StealS []float64 `json:"steal_s,omitempty"`
	// Share is the part of the machine's CPU time during the cell that
	// neither other work nor the hypervisor took: 1 - (other work's
	// CPU-seconds + steal) / (CPUs x wall), where other work is the busy
	// time of the whole machine less the cell's own (agents, the network's
	// daemons, ksoftirqd). 1: the cell had the machine to itself.
	Share float64 `json:"share"`
	// Load1 is the 1-minute load average when the cell started.
	Load1 float64 `json:"load1"`
	// Relative is the probes' speed against the fastest probe of the run
	// (the copy between two CPUs, or the spin work where a result of the
	// run has no pair probe), and Mode "fast" or "slow" where the run's
	// probes ran at two distinct speeds. Both are set when the run is
	// summarized, not by the measurement.
	Relative float64 `json:"relative,omitempty"`
	Mode     string  `json:"mode,omitempty"`
}

// SpeedProbe is one probe of the machine's CPUs: a fixed piece of work
// timed on each CPU, and what crosses between two of them, on threads at
// real-time priority (RT) where cnperf may, so that what is timed is the
// CPU and not the queue for it.
type SpeedProbe struct {
	CPUs  []CPUSpeed  `json:"cpus"`
	Pairs []PairSpeed `json:"pairs,omitempty"`
	// S is the probe's own wall time, seconds.
	S  float64 `json:"s"`
	RT bool    `json:"rt"`
}

// CPUSpeed is one CPU's probe: the fastest of a few timings of a fixed
// chain of 20,000 dependent xorshift steps (ns); CPU is -1 when the thread
// could not be moved there.
type CPUSpeed struct {
	CPU    int     `json:"cpu"`
	SpinNs float64 `json:"spin_ns"`
}

// PairSpeed is what crosses from CPU A to CPU B: the fastest mean round
// trip of a cache line (ns) and the fastest copy on B of 256 KiB just
// written on A (ns), the way a stream's bytes cross between its sender's
// and its receiver's CPUs.
type PairSpeed struct {
	A        int     `json:"a"`
	B        int     `json:"b"`
	BounceNs float64 `json:"bounce_ns"`
	XferNs   float64 `json:"xfer_ns"`
}

// SpeedSummary is what a run shows of the machine's speed over its cells
// (Run.MachineSpeed, set when the run is summarized).
type SpeedSummary struct {
	// Cells is how many results have a witness.
	Cells int `json:"cells"`
	// Probe is which probe the speeds use: "xfer" (the copy between two
	// CPUs) or "spin" (where a result has no pair probe).
	Probe string `json:"probe"`
	// Min and Median are of the cells' relative probe speeds (the fastest
	// is 1).
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	// ShareMin and ShareMedian are of the cells' Share.
	ShareMin    float64 `json:"share_min,omitempty"`
	ShareMedian float64 `json:"share_median,omitempty"`
	// Modes are the distinct speeds seen, the fastest first and 1: one
	// entry when the run ran at one speed (or a spread with no distinct
	// groups), two when at two ([1, 0.52]); none with too few cells.
	Modes []float64 `json:"modes,omitempty"`
	// Slow is how many cells ran at the slower of two modes.
	Slow int `json:"slow,omitempty"`
	// Tolerance is how far apart two speeds may be and count as the same
	// in a comparison (0.25: within 25 %).
	Tolerance float64 `json:"tolerance"`
}

// SpeedPairing is how a comparison paired its samples by the machine's
// speed (Comparison.Speed; absent where a cell has no witness).
type SpeedPairing struct {
	// Method is SpeedIndependent, SpeedSame, SpeedMatched or
	// SpeedUnmatched.
	Method string `json:"method"`
	// Pairs is how many pairs the comparison used; Rounds how many rounds
	// both cells ran.
	Pairs  int `json:"pairs"`
	Rounds int `json:"rounds"`
	// Tolerance is how much two samples' speeds may move the figure (by
	// its slope) and still count as the same speed: 0.25, 25 %.
	Tolerance float64 `json:"tolerance"`
	// Note says, for people, which samples were paired or left out, and
	// the speeds that kept them apart.
	Note string `json:"note,omitempty"`
}

// The ways a comparison pairs samples by speed.
const (
	// SpeedIndependent: the figure does not follow the machine's speed in
	// this run (its slope on the speed, within cells, is under 0.3 or not
	// told from 0); paired by round, as without a witness.
	SpeedIndependent = "independent"
	// SpeedSame: every round ran both cells at the same speed; paired by
	// round, as without a witness.
	SpeedSame = "same-speed"
	// SpeedMatched: only samples of the same speed are paired: by round
	// where both ran at it, else across rounds; the rest are left out.
	SpeedMatched = "matched"
	// SpeedUnmatched: too few samples ran at the same speed; paired by
	// round as without a witness, the ratio mixing speeds (the note says
	// which rounds and why).
	SpeedUnmatched = "unmatched"
)
