// Package result defines cnperf's stable JSON result schema (cnperf/run/v1)
// and captures the environment every result is only comparable with.
// Reports read these types only; nothing here knows how a number was made.
package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/tmpdir"
)

// Schema is the value of the "schema" field; bump it on an incompatible change.
const Schema = "cnperf/run/v1"

// ScenarioRef names a scenario of a scenario file: its name and where it
// starts.
type ScenarioRef struct {
	Name string `json:"name"`
	File string `json:"file"`
	Line int    `json:"line"`
}

// Run is one cnperf invocation: its environment and every result.
type Run struct {
	Schema     string    `json:"schema"`
	Version    string    `json:"cnperf_version"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at,omitempty"`
	Command    []string  `json:"command,omitempty"`
	// Scenario is the scenario of a scenario file (cnperf run -f) the run
	// was, absent for a run from flags alone.
	Scenario    *ScenarioRef `json:"scenario,omitempty"`
	Environment Environment  `json:"environment"`
	Results     []Result     `json:"results"`
	Skipped     []Skip       `json:"skipped,omitempty"`
	// Rounds is how many interleaved rounds the run asked for: every cell
	// ran once per round, in an order that changed from round to round.
	Rounds int `json:"rounds,omitempty"`
	// Incomplete marks a file written while the run was still going (after
	// each finished cell) or one cut short: the results in it are final,
	// the ones after them were never measured.
	Incomplete bool `json:"incomplete,omitempty"`
	// CellsPlanned and CellsDone count the cell runs (a cell once per
	// round) the run was to measure and finished, so that an incomplete
	// run says how much of it there is.
	CellsPlanned int `json:"cells_planned,omitempty"`
	CellsDone    int `json:"cells_done,omitempty"`
	// Summaries are per cell and headline figure: the median over rounds
	// with its confidence interval, and the ratio to the baseline with a
	// significance verdict.
	Summaries []Summary `json:"summaries,omitempty"`
	// MachineSpeed is what the run shows of the machine's speed over its
	// cells (each result's MachineSpeed).
	MachineSpeed *SpeedSummary `json:"machine_speed,omitempty"`
	// Warnings are what the reader must know to judge the numbers (a noisy
	// machine, a cell that failed in some rounds).
	Warnings []string `json:"warnings,omitempty"`
	// Builds are, per deployment, the commands that built its network and
	// started its agents, in order (backends that keep them: the lab).
	Builds []Build `json:"builds,omitempty"`
}

// Build is how one deployment was made.
type Build struct {
	Network  string   `json:"network"`
	Backend  string   `json:"backend,omitempty"`
	ID       string   `json:"id"` // the lab's (or project's) id
	Commands []string `json:"commands"`
}

// Summary is one figure of one cell over every round that measured it.
type Summary struct {
	Cell   CellKey `json:"cell"`
	Figure string  `json:"figure"` // a Metrics key, see Metrics.Value
	N      int     `json:"n"`      // rounds with a value
	Median float64 `json:"median"`
	// CILow and CIHigh bound the median with 95% confidence (CILevel);
	// CILevel is 0 when there is no interval (N < 2).
	CILow    float64 `json:"ci_low"`
	CIHigh   float64 `json:"ci_high"`
	CILevel  float64 `json:"ci_level"`
	CIMethod string  `json:"ci_method"`
	CV       float64 `json:"cv"` // coefficient of variation over rounds
	// VsBaseline compares with the baseline's same figure, paired by round.
	VsBaseline *Comparison `json:"vs_baseline,omitempty"`
	// VsReplica compares a cell of another backend (real Docker) with the
	// lab's replica of the same network in the same run, paired by round:
	// real / replica.
	VsReplica *Comparison `json:"vs_replica,omitempty"`
}

// CellKey names a cell: what a result of one round is a sample of.
type CellKey struct {
	Network   string `json:"network"`
	Workload  string `json:"workload"`
	Placement string `json:"placement"`
	LB        string `json:"lb,omitempty"`
	Services  int    `json:"services,omitempty"`
	Step      string `json:"step,omitempty"`
	// Backend is where the cell ran when not the local lab ("docker"): the
	// same network on two backends is two cells.
	Backend string `json:"backend,omitempty"`
}

// Key is the cell of a result.
func (r Result) Key() CellKey {
	return CellKey{Network: r.Network, Workload: r.Workload, Placement: r.Placement, LB: r.LB, Services: r.Services, Step: r.Step, Backend: r.Backend}
}

// Comparison is a ratio between two cells' figure (paired by round within a
// run, or two runs' samples unpaired), with its interval and a verdict that
// says what the data shows: Verdict "differs" (the interval is clear of
// 1 ± MinEffect and p < Alpha), "equivalent" (the whole interval lies inside
// 1 ± MinEffect: no change of MinEffect or more, shown) or "undecided"
// (neither; one round is always undecided).
type Comparison struct {
	Against CellKey `json:"against"`
	// Ratio is the estimate the interval is about: the geometric mean of
	// the per-round ratios (paired), or the ratio of the two samples'
	// geometric means (unpaired: two runs). Estimator names which; files
	// written before it existed held the median of the per-round ratios
	// (paired) or the ratio of the medians (unpaired).
	Ratio     float64 `json:"ratio"`
	Estimator string  `json:"estimator,omitempty"`
	CILow     float64 `json:"ci_low"`
	CIHigh    float64 `json:"ci_high"`
	// CILevel is the interval's confidence (0.95); 0 when there is no
	// interval (fewer than 2 rounds), and then Test says why.
	CILevel float64 `json:"ci_level,omitempty"`
	// N is the number of rounds compared: pairs (paired), or the first
	// cell's samples (unpaired), NAgainst the other's.
	N         int     `json:"n,omitempty"`
	NAgainst  int     `json:"n_against,omitempty"`
	P         float64 `json:"p"`
	Test      string  `json:"test"`
	Alpha     float64 `json:"alpha"`
	MinEffect float64 `json:"min_effect"` // e.g. 0.05 = 5 %
	// Significant is Verdict == "differs", kept for readers of older files.
	Significant bool `json:"significant"`
	// Verdict is "differs", "equivalent" or "undecided" (older files:
	// "better", "worse" or "same"; stats.VerdictOf reads both).
	Verdict string `json:"verdict"`
	// Direction is the side of 1 the ratio lies on, in the figure's sense:
	// "better" or "worse" ("higher" or "lower" for a figure without a
	// direction); absent when the ratio is exactly 1. It is shown only
	// when Verdict is "differs".
	Direction string `json:"direction,omitempty"`
	// RoundsNeeded, for an undecided comparison with a spread, is how many
	// rounds (pairs; unpaired: on each side) would give a verdict if the
	// ratio and the spread stayed as observed; absent when there is no
	// estimate (one round, or more than 1000 rounds would not do).
	RoundsNeeded int `json:"rounds_needed,omitempty"`
	// Speed is how the samples were paired by the machine's speed, where
	// both cells recorded it (MachineSpeed).
	Speed *SpeedPairing `json:"speed,omitempty"`
}

// Skip records a network/workload/placement that was asked for but could not
// run here, with the reason, so a missing row is never silent.
type Skip struct {
	Network   string `json:"network"`
	Workload  string `json:"workload,omitempty"`
	Placement string `json:"placement,omitempty"`
	Reason    string `json:"reason"`
}

// Result is one measurement: a workload over a network in one placement.
type Result struct {
	Network   string         `json:"network"`
	Workload  string         `json:"workload"`
	Placement string         `json:"placement"`
	LB        string         `json:"lb,omitempty"`
	Services  int            `json:"services,omitempty"`
	Step      string         `json:"step,omitempty"` // which step of a multi-step workload
	Params    map[string]any `json:"params"`
	Metrics   Metrics        `json:"metrics"`
	Histogram string         `json:"histogram,omitempty"` // compressed HdrHistogram (ns)
	Path      string         `json:"path,omitempty"`      // what the client dialled
	Error     string         `json:"error,omitempty"`
	Round     int            `json:"round,omitempty"` // 1-based round of an interleaved run
	Backend   string         `json:"backend,omitempty"`
	// Flows are each flow's figures when several ran at once (--parallel);
	// Metrics is then their aggregate.
	Flows []Metrics `json:"flows,omitempty"`
	// VsQuiet compares a result measured beside noisy neighbours with the
	// same cell measured without them, paired by round: the ratio of the
	// main figure, its interval and verdict (set once every round ran).
	VsQuiet *Comparison `json:"vs_quiet,omitempty"`
	// VsUntuned compares a result measured with a --tuning profile with
	// the same cell measured untuned (tuning=none) in the same run, paired
	// by round: the ratio of the main figure, its interval and verdict.
	VsUntuned *Comparison `json:"vs_untuned,omitempty"`
	// MachineSpeed is how fast the machine's CPUs ran around the cell.
	MachineSpeed *MachineSpeed `json:"machine_speed,omitempty"`
}

// Metrics holds the figures of a result. A metric that does not apply to a
// workload is absent (nil), never zero.
type Metrics struct {
	ThroughputBps    *float64           `json:"throughput_bps,omitempty"`
	TransactionsPerS *float64           `json:"transactions_per_s,omitempty"`
	LatencyUs        map[string]float64 `json:"latency_us,omitempty"`
	LossRatio        *float64           `json:"loss_ratio,omitempty"`
	Transactions     *int64             `json:"transactions,omitempty"`
	Bytes            *int64             `json:"bytes,omitempty"`
	Messages         *int64             `json:"messages,omitempty"`
	Errors           *int64             `json:"errors,omitempty"`
	DurationS        *float64           `json:"duration_s,omitempty"`
	ClientCPUSPerS   *float64           `json:"client_cpu_s_per_s,omitempty"`
	ServerCPUSPerS   *float64           `json:"server_cpu_s_per_s,omitempty"`
	Extra            map[string]float64 `json:"extra,omitempty"`
	// Histograms are encoded HDR histograms (ns) beside the result's main
	// one, by name: "uncorrected" latency and "send_lag" of open-loop runs.
	Histograms map[string]string `json:"histograms,omitempty"`
	// StartupMs is the startup workload's create-to-first-reply time:
	// mean, p50, p95 (and min, max) over the repetitions.
	StartupMs map[string]float64 `json:"startup_ms,omitempty"`
	// PhasesMs is the mean time of each start-up phase (namespace, links,
	// control_plane, first_packet, and any a mode marks itself).
	PhasesMs map[string]float64 `json:"phases_ms,omitempty"`
	// CPU is the CPU the cell cost: the whole machine's and the agents'.
	CPU *CPUCost `json:"cpu,omitempty"`
	// Kernel is what the kernel saw of the measured traffic.
	Kernel *KernelCounters `json:"kernel,omitempty"`
}

// CPUCost is the paper's service demand: CPU time spent during a cell, for
// the whole machine (from /proc/stat: user, system, softirq...) so that the
// network's kernel work is counted, for the client and server agents
// (their own rusage), and for the cell alone (agents, the network's
// daemons, ksoftirqd), per transaction and per payload byte.
//
// The cell's figure is the one to compare on a shared machine: the
// machine's counts whatever else runs (when other work saturates the CPUs
// it is about CPUs x wall / bytes, an inverse of throughput), while the
// agents' leave out a user-space overlay's daemons. With the kernel's tick
// accounting (no IRQ_TIME_ACCOUNTING) softirq work done in an agent's
// context is in that agent's system time; what the kernel defers runs in
// ksoftirqd and is added; softirq that lands on an idle CPU or on other
// work is not counted.
type CPUCost struct {
	WallS            float64  `json:"wall_s"`
	MachineS         float64  `json:"machine_s"` // busy CPU-seconds, all CPUs
	UserS            float64  `json:"user_s"`
	SystemS          float64  `json:"system_s"`
	SoftirqS         float64  `json:"softirq_s"`
	IRQS             float64  `json:"irq_s"`
	AgentsS          float64  `json:"agents_s"`                      // client + server agents' user+system
	UsPerTrans       *float64 `json:"us_per_trans,omitempty"`        // machine
	NsPerByte        *float64 `json:"ns_per_byte,omitempty"`         // machine
	AgentsUsPerTrans *float64 `json:"agents_us_per_trans,omitempty"` // agents only
	AgentsNsPerByte  *float64 `json:"agents_ns_per_byte,omitempty"`  // agents only
	// The cell alone: agents + the network's daemons + ksoftirqd.
	KSoftirqdS     *float64 `json:"ksoftirqd_s,omitempty"`
	CellS          *float64 `json:"cell_s,omitempty"`
	CellUsPerTrans *float64 `json:"cell_us_per_trans,omitempty"`
	CellNsPerByte  *float64 `json:"cell_ns_per_byte,omitempty"`
}

func (c *CPUCost) value(name string) (float64, bool) {
	d := func(p *float64) (float64, bool) {
		if p == nil {
			return 0, false
		}
		return *p, true
	}
	switch name {
	case "us_per_trans":
		return d(c.UsPerTrans)
	case "ns_per_byte":
		return d(c.NsPerByte)
	case "agents_us_per_trans":
		return d(c.AgentsUsPerTrans)
	case "agents_ns_per_byte":
		return d(c.AgentsNsPerByte)
	case "cell_us_per_trans":
		return d(c.CellUsPerTrans)
	case "cell_ns_per_byte":
		return d(c.CellNsPerByte)
	case "cell_s":
		return d(c.CellS)
	case "machine_s":
		return c.MachineS, true
	case "softirq_s":
		return c.SoftirqS, true
	}
	return 0, false
}

// KernelCounters explain a low figure: TCP retransmissions of the measured
// connections (tcp_info) and UDP datagrams the receiver dropped.
type KernelCounters struct {
	TCPRetrans    *int64 `json:"tcp_retrans,omitempty"`
	UDPRcvbufErrs *int64 `json:"udp_rcvbuf_errors,omitempty"`
	UDPInErrs     *int64 `json:"udp_in_errors,omitempty"`
}

// F and I make optional metric pointers.
func F(v float64) *float64 { return &v }

// I makes an optional integer metric.
func I(v int64) *int64 { return &v }

// Write stores the run as indented JSON.
func (r *Run) Write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding results: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	return nil
}

// WriteAtomic stores the run as Write does, through a temporary file in
// the same folder renamed over path, so that a reader (or a crash) never
// sees half a file.
func (r *Run) WriteAtomic(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding results: %w", err)
	}
	err = tmpdir.ReplaceFile(path, ".cnperf-results-*.tmp", func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	return nil
}

// Read loads a run written by Write and checks its schema.
func Read(path string) (*Run, error) {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%s: %d MB, above the %d MB a results file may hold (decoding takes several times its size in memory); is it a cnperf results file? split a long run into several (fewer --repeat rounds each)",
			path, st.Size()>>20, MaxFileBytes>>20)
	}
	if err := sniff(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			return nil, fmt.Errorf("%s is a folder; name a results file in it (a .json written by `cnperf run`)", path)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, notExist(path)
		}
		return nil, err
	}
	return Parse(path, b)
}

// sniff refuses, from its first bytes, a file that cannot be a results
// file (JSON text starting with an object), before the whole of it is
// read: a large file of something else would otherwise cost its size in
// memory to be refused (issue 34: 238 MB for a 200 MB file rejected at
// byte 1). Errors opening it are left to the read that follows.
func sniff(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	buf := make([]byte, 512)
	n, _ := io.ReadFull(f, buf)
	for _, c := range buf[:n] {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return nil
		}
		return fmt.Errorf("%s: not a cnperf results file (it does not start with a JSON object, but with %q); name a file written by `cnperf run`", path, oneLine(string(buf[:min(n, 16)])))
	}
	return nil // empty or blank: the decoder says so
}

// Parse decodes a run file's bytes (path names it in errors) and checks
// its schema.
func Parse(path string, b []byte) (*Run, error) {
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a cnperf results file (%v%s); name a file written by `cnperf run`", path, oneLine(err.Error()), lineOf(b, err))
	}
	switch {
	case r.Schema == "":
		// null, {} or another program's JSON: not an older cnperf's
		return nil, fmt.Errorf("%s: not a cnperf results file (no \"schema\": %q in it); name a file written by `cnperf run`", path, Schema)
	case !strings.HasPrefix(r.Schema, "cnperf/run/"):
		return nil, fmt.Errorf("%s: not a cnperf results file (schema %q, not %q); name a file written by `cnperf run`", path, r.Schema, Schema)
	case r.Schema != Schema:
		return nil, fmt.Errorf("%s: schema %q, this cnperf reads %q; read it with the cnperf that wrote it", path, r.Schema, Schema)
	}
	if err := r.Check(); err != nil {
		return nil, fmt.Errorf("%s: %v; the file is not as cnperf wrote it: restore it, or remove that record", path, err)
	}
	r.upgradeReplicas()
	return &r, nil
}

// lineOf is where in b a decoding error is, as " at line N", when the
// error says (a value out of range, a stray NaN).
func lineOf(b []byte, err error) string {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		return ""
	}
	if off <= 0 || off > int64(len(b)) {
		return ""
	}
	return fmt.Sprintf(" at line %d", 1+strings.Count(string(b[:off]), "\n"))
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// notExist is a missing results file: errors.Is(err, fs.ErrNotExist).
type notExist string

func (p notExist) Error() string {
	return string(p) + ": no such file; name a results file written by `cnperf run` (e.g. cnperf-results/run-....json)"
}

func (notExist) Unwrap() error { return fs.ErrNotExist }
