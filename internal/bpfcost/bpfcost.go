// Package bpfcost measures what eBPF programs cost while a workload runs:
// each program's run count and run time over an interval, read from the
// kernel's own per-program statistics (bpf(BPF_ENABLE_STATS)), which
// cnperf turns on only for as long as it holds the file descriptor the
// kernel returns: the sysctl kernel.bpf_stats_enabled is never written,
// and a killed cnperf turns the statistics off by dying. It is how a real
// datapath (Cilium's bpf_lxc, bpf_host, socket hooks) and cnperf's replica
// of it are compared program by program: which programs a packet crosses
// and what each costs.
package bpfcost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/cli"
)

// Prog is one loaded program's cumulative statistics.
type Prog struct {
	ID      uint32
	Name    string
	Type    string
	Runs    uint64
	Runtime time.Duration
}

// Enable turns the kernel's per-program run-time statistics on until the
// returned Closer is closed (or the process dies).
func Enable() (io.Closer, error) {
	c, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		return nil, fmt.Errorf("turning on BPF run-time statistics (bpf(BPF_ENABLE_STATS), Linux 5.8): %w", err)
	}
	return c, nil
}

// Snapshot lists every loaded program with its statistics so far.
func Snapshot() ([]Prog, error) {
	var out []Prog
	var id ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, ebpf.ErrNotSupported) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("listing BPF programs: %w", err)
		}
		id = next
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue // unloaded meanwhile
		}
		info, ierr := p.Info()
		st, serr := p.Stats()
		p.Close()
		if ierr != nil || serr != nil {
			continue
		}
		out = append(out, Prog{ID: uint32(id), Name: info.Name, Type: info.Type.String(), Runs: st.RunCount, Runtime: st.Runtime})
	}
	return out, nil
}

// Cost is one program's share of an interval.
type Cost struct {
	Prog
	// NsPerRun is the mean run time of one run over the interval.
	NsPerRun float64
}

// Diff is what each program did between two snapshots: the programs that
// ran, most total time first; a program loaded after the first snapshot
// counts from zero.
func Diff(before, after []Prog) []Cost {
	prev := map[uint32]Prog{}
	for _, p := range before {
		prev[p.ID] = p
	}
	var out []Cost
	for _, p := range after {
		q := prev[p.ID]
		if q.Name != "" && q.Name != p.Name { // an id reused: a new program
			q = Prog{}
		}
		d := p
		d.Runs -= q.Runs
		d.Runtime -= q.Runtime
		if d.Runs == 0 {
			continue
		}
		out = append(out, Cost{Prog: d, NsPerRun: float64(d.Runtime.Nanoseconds()) / float64(d.Runs)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Runtime != out[j].Runtime {
			return out[i].Runtime > out[j].Runtime
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Format prints costs as a table, only the programs whose names start with
// one of prefixes (all with none).
func Format(w io.Writer, costs []Cost, prefixes []string) {
	fmt.Fprintf(w, "%-6s %-24s %-14s %12s %12s %10s\n", "id", "program", "type", "runs", "total ms", "ns/run")
	for _, c := range costs {
		if !matches(c.Name, prefixes) {
			continue
		}
		fmt.Fprintf(w, "%-6d %-24s %-14s %12d %12.1f %10.0f\n", c.ID, c.Name, c.Type, c.Runs, float64(c.Runtime.Microseconds())/1000, c.NsPerRun)
	}
}

func matches(name string, prefixes []string) bool {
	if len(prefixes) == 0 {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Watch turns the statistics on for d and prints what each program did
// meanwhile (`cnperf bench bpf`).
func Watch(ctx context.Context, d time.Duration, prefixes []string, w io.Writer) error {
	stats, err := Enable()
	if err != nil {
		return err
	}
	defer stats.Close()
	before, err := Snapshot()
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return errors.New("interrupted; nothing measured")
	case <-time.After(d):
	}
	after, err := Snapshot()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "eBPF programs that ran in %v (the kernel's run-time statistics, bpf(BPF_ENABLE_STATS), on only meanwhile):\n", d)
	Format(w, Diff(before, after), prefixes)
	return nil
}

// Run is `cnperf bench bpf`: its flags, then Watch.
func Run(c *cli.Ctx, out io.Writer, interrupted func() (context.Context, context.CancelFunc)) error {
	fs := c.Flags()
	d := fs.Duration("duration", 10*time.Second, "how long to watch (the kernel's statistics are on only meanwhile)")
	match := fs.String("match", "", "only programs whose names start with one of these comma-separated prefixes (e.g. cil_,cnperf_); default all that ran")
	if _, err := c.Parse(); err != nil {
		return err
	}
	if *d < time.Second || *d > time.Hour {
		return cli.Usage(fmt.Errorf("--duration %v; use a duration from 1s to 1h", *d))
	}
	var prefixes []string
	if *match != "" {
		prefixes = strings.Split(*match, ",")
	}
	ctx, stop := interrupted()
	defer stop()
	return Watch(ctx, *d, prefixes, out)
}
