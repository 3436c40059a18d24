package sched

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/result"
)

// fakeBackend deploys nothing real: it records what happens.
type fakeBackend struct {
	mu        sync.Mutex
	events    []string
	failOn    string // network whose Deploy fails
	skipOn    string // network whose Deploy is a skip
	uncheckOn string // network Check refuses
	recording bool   // deployments keep their commands (backend.Recorder)
}

func (b *fakeBackend) log(s string) {
	b.mu.Lock()
	b.events = append(b.events, s)
	b.mu.Unlock()
}

func (b *fakeBackend) Name() string { return "fake" }
func (b *fakeBackend) Check(n string) error {
	if n == b.uncheckOn {
		return fmt.Errorf("%s needs CONFIG_X", n)
	}
	return nil
}
func (b *fakeBackend) Allows(string, ground.Placement) (bool, string) { return true, "" }
func (b *fakeBackend) Placements(string) ([]ground.Placement, error) {
	return ground.AllPlacements, nil
}
func (b *fakeBackend) Deploy(ctx context.Context, t backend.Topology) (backend.Deployment, error) {
	switch t.Network {
	case b.failOn:
		return nil, errors.New("boom")
	case b.skipOn:
		return nil, backend.Skip("no pod addresses")
	}
	b.log("deploy " + t.Network)
	if b.recording {
		return &recordingDep{fakeDep{b: b, net: t.Network}}, nil
	}
	return &fakeDep{b: b, net: t.Network}, nil
}

type fakeDep struct {
	b   *fakeBackend
	net string
}

func (d *fakeDep) ID() string              { return d.net }
func (d *fakeDep) Network() string         { return d.net }
func (d *fakeDep) Pod(string) *backend.Pod { return nil }
func (d *fakeDep) Dial(context.Context, string, string, string, int) (netip.AddrPort, error) {
	return netip.AddrPort{}, nil
}
func (d *fakeDep) Params() map[string]any                           { return nil }
func (d *fakeDep) AgentLog(string) string                           { return "" }
func (d *fakeDep) Environment(context.Context, *result.Environment) {}
func (d *fakeDep) Teardown() error                                  { d.b.log("teardown " + d.net); return nil }

// recordingDep keeps the commands that built it, as the lab does.
type recordingDep struct{ fakeDep }

func (d *recordingDep) Commands() []string { return []string{"ip netns add " + d.net} }

func cell(name string, b *fakeBackend, hook func(ctx context.Context, round int) error) Cell {
	return Cell{Name: name, Run: func(ctx context.Context, d backend.Deployment, round int, rec *Recorder) error {
		b.log(fmt.Sprintf("r%d %s/%s", round, d.Network(), name))
		if hook != nil {
			if err := hook(ctx, round); err != nil {
				return err
			}
		}
		rec.Result(result.Result{Network: d.Network(), Workload: name, Round: round})
		return nil
	}}
}

func units(b *fakeBackend, nets []string, hook func(context.Context, int) error) []Unit {
	var us []Unit
	for _, n := range nets {
		us = append(us, Unit{Name: n, Backend: b, Topology: backend.Topology{Network: n},
			Cells: []Cell{cell("rr", b, hook), cell("stream", b, hook)}, Skip: result.Skip{Network: n}})
	}
	return us
}

func TestOrder(t *testing.T) {
	cases := []struct {
		n, r int
		want []int
	}{
		{4, 1, []int{0, 1, 2, 3}},
		{4, 2, []int{0, 3, 2, 1}},
		{4, 3, []int{2, 3, 0, 1}},
		{4, 4, []int{2, 1, 0, 3}},
		{0, 1, []int{}},
		{1, 2, []int{0}},
	}
	for _, c := range cases {
		if got := Order(c.n, c.r); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Order(%d, %d) = %v, want %v", c.n, c.r, got, c.want)
		}
	}
	// over 2k rounds every cell is first at least once and each pair runs
	// in both orders
	n := 5
	first := map[int]bool{}
	before := map[[2]int]bool{}
	for r := 1; r <= 2*n; r++ {
		o := Order(n, r)
		first[o[0]] = true
		for i := range o {
			for j := i + 1; j < len(o); j++ {
				before[[2]int{o[i], o[j]}] = true
			}
		}
		seen := map[int]bool{}
		for _, x := range o {
			seen[x] = true
		}
		if len(seen) != n {
			t.Fatalf("round %d: %v is not a permutation", r, o)
		}
	}
	if len(first) != n {
		t.Errorf("cells first in some round: %v, want all %d", first, n)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j && !before[[2]int{i, j}] {
				t.Errorf("cell %d never ran before cell %d", i, j)
			}
		}
	}
}

func TestRunRounds(t *testing.T) {
	b := &fakeBackend{}
	run := &result.Run{}
	rec := &Recorder{Run: run}
	if err := Run(context.Background(), units(b, []string{"baseline", "vxlan"}, nil), 3, rec); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"deploy baseline", "deploy vxlan",
		"r1 baseline/rr", "r1 baseline/stream", "r1 vxlan/rr", "r1 vxlan/stream",
		"r2 baseline/rr", "r2 vxlan/stream", "r2 vxlan/rr", "r2 baseline/stream",
		"r3 vxlan/rr", "r3 vxlan/stream", "r3 baseline/rr", "r3 baseline/stream",
		"teardown vxlan", "teardown baseline",
	}
	if !reflect.DeepEqual(b.events, want) {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(b.events, "\n"), strings.Join(want, "\n"))
	}
	if len(run.Results) != 12 {
		t.Fatalf("%d results, want 12", len(run.Results))
	}
	per := map[int]int{}
	for _, r := range run.Results {
		per[r.Round]++
	}
	if per[1] != 4 || per[2] != 4 || per[3] != 4 {
		t.Errorf("results per round %v, want 4 each", per)
	}
}

// Units of a later phase are built only once every unit of the earlier
// phases is torn down; within a phase the cells interleave as ever, and
// the phases' cells are all planned up front.
func TestRunPhases(t *testing.T) {
	b := &fakeBackend{}
	run := &result.Run{}
	rec := &Recorder{Run: run}
	us := units(b, []string{"lab1", "kube10k", "kube1", "lab10k"}, nil)
	us[1].Phase, us[3].Phase = 1, 1
	if err := Run(context.Background(), us, 2, rec); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"deploy lab1", "deploy kube1",
		"r1 lab1/rr", "r1 lab1/stream", "r1 kube1/rr", "r1 kube1/stream",
		"r2 lab1/rr", "r2 kube1/stream", "r2 kube1/rr", "r2 lab1/stream",
		"teardown kube1", "teardown lab1",
		"deploy kube10k", "deploy lab10k",
		"r1 kube10k/rr", "r1 kube10k/stream", "r1 lab10k/rr", "r1 lab10k/stream",
		"r2 kube10k/rr", "r2 lab10k/stream", "r2 lab10k/rr", "r2 kube10k/stream",
		"teardown lab10k", "teardown kube10k",
	}
	if !reflect.DeepEqual(b.events, want) {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(b.events, "\n"), strings.Join(want, "\n"))
	}
	if run.CellsPlanned != 16 || len(run.Results) != 16 {
		t.Errorf("%d cells planned, %d results; want 16 and 16", run.CellsPlanned, len(run.Results))
	}
}

// A deployment that keeps its commands has them in the run, once, in the
// order the units were deployed; one that does not adds nothing.
func TestRunRecordsBuilds(t *testing.T) {
	for _, recording := range []bool{false, true} {
		b := &fakeBackend{recording: recording}
		run := &result.Run{}
		if err := Run(context.Background(), units(b, []string{"baseline", "vxlan"}, nil), 2, &Recorder{Run: run}); err != nil {
			t.Fatal(err)
		}
		var want []result.Build
		if recording {
			want = []result.Build{
				{Network: "baseline", Backend: "fake", ID: "baseline", Commands: []string{"ip netns add baseline"}},
				{Network: "vxlan", Backend: "fake", ID: "vxlan", Commands: []string{"ip netns add vxlan"}},
			}
		}
		if !reflect.DeepEqual(run.Builds, want) {
			t.Errorf("recording=%v: builds %+v, want %+v", recording, run.Builds, want)
		}
	}
}

func TestRunTeardownOnError(t *testing.T) {
	b := &fakeBackend{failOn: "vxlan"}
	rec := &Recorder{Run: &result.Run{}}
	err := Run(context.Background(), units(b, []string{"baseline", "vxlan", "host-gw"}, nil), 2, rec)
	if err == nil || !strings.Contains(err.Error(), "vxlan: boom") {
		t.Fatalf("error %v, want vxlan: boom", err)
	}
	want := []string{"deploy baseline", "teardown baseline"}
	if !reflect.DeepEqual(b.events, want) {
		t.Errorf("events %v, want %v", b.events, want)
	}
	// an error inside a cell also tears everything down
	b = &fakeBackend{}
	err = Run(context.Background(), units(b, []string{"baseline", "vxlan"}, func(_ context.Context, r int) error {
		if r == 2 {
			return errors.New("agent died")
		}
		return nil
	}), 3, &Recorder{Run: &result.Run{}})
	if err == nil || !strings.Contains(err.Error(), "agent died") {
		t.Fatalf("cell error %v", err)
	}
	if last := b.events[len(b.events)-2:]; !reflect.DeepEqual(last, []string{"teardown vxlan", "teardown baseline"}) {
		t.Errorf("not torn down after a cell error: %v", b.events)
	}
}

func TestRunCancel(t *testing.T) {
	b := &fakeBackend{}
	ctx, cancel := context.WithCancel(context.Background())
	run := &result.Run{}
	err := Run(ctx, units(b, []string{"baseline", "vxlan"}, func(_ context.Context, r int) error {
		if r == 2 {
			cancel()
		}
		return nil
	}), 3, &Recorder{Run: run})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if len(run.Skipped) != 0 {
		t.Errorf("a cancel was recorded as a skip: %v", run.Skipped)
	}
	if last := b.events[len(b.events)-2:]; !reflect.DeepEqual(last, []string{"teardown vxlan", "teardown baseline"}) {
		t.Errorf("not torn down after cancel: %v", b.events)
	}
	for _, r := range run.Results {
		if r.Round > 2 {
			t.Errorf("measured round %d after the cancel", r.Round)
		}
	}
}

func TestRunSkips(t *testing.T) {
	b := &fakeBackend{skipOn: "macvlan", uncheckOn: "ipvlan"}
	run := &result.Run{}
	if err := Run(context.Background(), units(b, []string{"ipvlan", "macvlan", "host-gw"}, nil), 1, &Recorder{Run: run}); err != nil {
		t.Fatal(err)
	}
	if len(run.Skipped) != 2 || run.Skipped[0].Network != "ipvlan" || !strings.Contains(run.Skipped[0].Reason, "CONFIG_X") ||
		run.Skipped[1].Network != "macvlan" || run.Skipped[1].Reason != "no pod addresses" {
		t.Errorf("skipped %+v", run.Skipped)
	}
	if len(run.Results) != 2 {
		t.Errorf("%d results, want host-gw's 2", len(run.Results))
	}
}

func TestRecorderPersists(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	run := &result.Run{Schema: result.Schema}
	rec := &Recorder{Run: run, Path: path}
	rec.Result(result.Result{Network: "host", Workload: "tcp_rr", Round: 1})
	got, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Incomplete || len(got.Results) != 1 {
		t.Errorf("after one cell: incomplete=%v results=%d, want true 1", got.Incomplete, len(got.Results))
	}
	if run.Incomplete {
		t.Error("the in-memory run was left marked incomplete")
	}
	if err := rec.Finish(true); err != nil {
		t.Fatal(err)
	}
	if got, _ = result.Read(path); got.Incomplete {
		t.Error("finished run still marked incomplete")
	}
	ents, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// TestCancelInPrepareIsNoSkip: a unit's preparation (a service probe)
// that fails because the run was interrupted is not a skip, even when the
// preparation reports it as one (issue 11: "skip host-gw lb=ebpf-socket:
// service unreachable: ... context canceled", exit 0).
func TestCancelInPrepareIsNoSkip(t *testing.T) {
	b := &fakeBackend{}
	ctx, cancel := context.WithCancel(context.Background())
	us := units(b, []string{"baseline", "host-gw"}, nil)
	us[1].Prepare = func(ctx context.Context, _ backend.Deployment) (func() error, error) {
		cancel()
		return func() error { b.log("cleanup host-gw"); return nil },
			backend.Skip("service unreachable: dial: " + ctx.Err().Error() + "; the network may bypass the node's stack")
	}
	run := &result.Run{}
	err := Run(ctx, us, 1, &Recorder{Run: run})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if len(run.Skipped) != 0 {
		t.Errorf("an interrupt was recorded as a skip: %+v", run.Skipped)
	}
	want := []string{"deploy baseline", "deploy host-gw", "cleanup host-gw", "teardown host-gw", "teardown baseline"}
	if !reflect.DeepEqual(b.events, want) {
		t.Errorf("events %v, want %v", b.events, want)
	}
}

// TestCellCounts: the run file says how many cell runs were planned and
// how many finished, a skipped unit's cells taken off the plan, so an
// incomplete run can say how much of it there is.
func TestCellCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	b := &fakeBackend{skipOn: "macvlan"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	run := &result.Run{Schema: result.Schema}
	err := Run(ctx, units(b, []string{"baseline", "macvlan", "vxlan"}, func(context.Context, int) error {
		if n++; n == 6 { // the sixth cell run is cut
			cancel()
			return context.Canceled
		}
		return nil
	}), 3, &Recorder{Run: run, Path: path})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	got, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	// 2 units × 2 cells × 3 rounds planned (macvlan's 6 off); 5 finished
	if got.CellsPlanned != 12 || got.CellsDone != 5 || !got.Incomplete || len(got.Results) != 5 {
		t.Errorf("file: planned %d done %d incomplete %v results %d; want 12 5 true 5",
			got.CellsPlanned, got.CellsDone, got.Incomplete, len(got.Results))
	}
}

// TestInterruptedCellNotDone: a cell cut short by an interrupt returns
// quietly without a result; it is not counted done (issue 23, finding 7:
// cells_done 4 with 3 results).
func TestInterruptedCellNotDone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	b := &fakeBackend{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	run := &result.Run{Schema: result.Schema}
	us := units(b, []string{"baseline", "vxlan"}, nil)
	for i := range us {
		for j := range us[i].Cells {
			inner := us[i].Cells[j].Run
			us[i].Cells[j].Run = func(ctx context.Context, d backend.Deployment, round int, rec *Recorder) error {
				if n++; n == 4 {
					cancel() // as a pair cell does: no result, no error
					return nil
				}
				return inner(ctx, d, round, rec)
			}
		}
	}
	err := Run(ctx, us, 2, &Recorder{Run: run, Path: path})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	got, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.CellsDone != len(got.Results) || got.CellsDone != 3 {
		t.Errorf("cells done %d with %d results; want 3 and 3", got.CellsDone, len(got.Results))
	}
}

// TestWriteFailureStops: a results file that cannot be written stops the
// run at once; the last complete file keeps the cells before it (issue
// 23, finding 3: the run went on measuring what it could not keep).
func TestWriteFailureStops(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "run.json")
	moved := dir + ".moved"
	b := &fakeBackend{}
	n := 0
	run := &result.Run{Schema: result.Schema}
	err := Run(context.Background(), units(b, []string{"baseline", "vxlan"}, func(context.Context, int) error {
		if n++; n == 3 {
			// the folder goes away under the run: the next write fails
			if err := os.Rename(dir, moved); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	}), 3, &Recorder{Run: run, Path: path})
	var ns *NotSaved
	if !errors.Is(err, ErrNotSaved) || !errors.As(err, &ns) {
		t.Fatalf("error %v, want ErrNotSaved", err)
	}
	if n != 3 {
		t.Errorf("%d cells ran, want the run to stop after the third", n)
	}
	if !ns.Written || ns.Saved != 2 || !strings.Contains(err.Error(), "holds the 2 results") {
		t.Errorf("error %q (saved %d written %v), want the 2 saved results named", err, ns.Saved, ns.Written)
	}
	got, rerr := result.Read(filepath.Join(moved, "run.json"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	if len(got.Results) != 2 || !got.Incomplete {
		t.Errorf("last complete file: %d results, incomplete %v; want 2, true", len(got.Results), got.Incomplete)
	}
}

// trackerLog records what the scheduler tells a Tracker.
type trackerLog []string

func (l *trackerLog) add(format string, args ...any) { *l = append(*l, fmt.Sprintf(format, args...)) }
func (l *trackerLog) Plan(units [][]time.Duration, rounds int) {
	l.add("plan %v x%d", units, rounds)
}
func (l *trackerLog) Skip(cells []time.Duration) { l.add("skip %v", cells) }
func (l *trackerLog) Building()                  { l.add("building") }
func (l *trackerLog) Built()                     { l.add("built") }
func (l *trackerLog) TornDown()                  { l.add("torn down") }
func (l *trackerLog) CellStart(round int, planned time.Duration) {
	l.add("start r%d %v", round, planned)
}
func (l *trackerLog) CellDone(planned time.Duration) { l.add("done %v", planned) }
func (l *trackerLog) Finish()                        { l.add("finish") }

// TestTracker: the tracker hears the plan with every cell's planned time,
// each build, skip, cell run and teardown, and the end, in order.
func TestTracker(t *testing.T) {
	b := &fakeBackend{skipOn: "macvlan", uncheckOn: "ipvlan"}
	us := units(b, []string{"ipvlan", "macvlan", "vxlan"}, nil)
	for i := range us {
		us[i].Cells[0].Planned = 2 * time.Second // rr; stream's is not known
	}
	var log trackerLog
	if err := Run(context.Background(), us, 2, &Recorder{Run: &result.Run{}, Progress: &log}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"plan [[2s 0s] [2s 0s] [2s 0s]] x2",
		"skip [2s 0s]",             // ipvlan: Check refuses
		"building", "skip [2s 0s]", // macvlan: Deploy skips
		"building", "built",
		"start r1 2s", "done 2s", "start r1 0s", "done 0s",
		"start r2 2s", "done 2s", "start r2 0s", "done 0s", // Order(2, 2): rotated, then reversed
		"torn down", "finish",
	}
	if !slices.Equal(log, want) {
		t.Errorf("tracker heard\n%q\nwant\n%q", log, want)
	}
}
