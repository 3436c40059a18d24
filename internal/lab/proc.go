package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/lab/iproute"
)

// Proc is a long-running process the lab started inside one of its namespaces.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	done chan struct{}
	err  error
	once sync.Once
}

// Start runs argv inside namespace ns in the background, its output going to
// <state>/<name>.log. The process dies with cnperf (parent-death signal) and
// is stopped at Teardown.
func (l *Lab) Start(ns, name string, argv ...string) (*Proc, error) {
	full := append([]string{"ip", "netns", "exec", ns}, argv...)
	l.mu.Lock()
	l.log = append(l.log, strings.Join(full, " ")+" &")
	l.mu.Unlock()
	cmd := exec.Command(full[0], full[1:]...)
	logf, err := os.Create(filepath.Join(l.Dir, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Proc{Name: name, Cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	l.mu.Lock()
	l.procs = append(l.procs, p)
	l.mu.Unlock()
	return p, nil
}

// Daemon is a process Spawn starts to outlive cnperf.
type Daemon struct {
	Name  string // for messages
	NetNS string // the network namespace it runs in (nsenter --net)
	// Mount, when not 0, is a process whose mount namespace it joins too
	// (nsenter --mount).
	Mount int
	// Cgroup is where it runs, relative to every hierarchy's root (see
	// MakeCgroup): it is there before it starts, so that whatever it
	// forks is born there too.
	Cgroup string
	Log    string   // the file its output is appended to
	Env    []string // on top of cnperf's environment
	Argv   []string
}

// Spawn starts d in a session of its own and without a parent-death
// signal: it outlives cnperf, and whoever stops it finds it by its cgroup
// (StopRunCgroup). Equivalent to:
//
//	sh -c 'echo $$ >CGROUP/cgroup.procs ...; exec nsenter --net=/run/netns/NS [--mount=/proc/PID/ns/mnt] ARGV' >>LOG 2>&1 &
func Spawn(d Daemon) (*Proc, error) {
	dirs, err := MakeCgroup(d.Cgroup)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", d.Name, err)
	}
	argv := []string{"nsenter", "--net=" + iproute.RunDir + "/" + d.NetNS}
	if d.Mount != 0 {
		argv = append(argv, fmt.Sprintf("--mount=/proc/%d/ns/mnt", d.Mount))
	}
	argv = InCgroups(dirs, append(argv, d.Argv...)...)
	logf, err := os.OpenFile(d.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", d.Name, err)
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if len(d.Env) > 0 {
		cmd.Env = append(os.Environ(), d.Env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", d.Name, err)
	}
	p := &Proc{Name: d.Name, Cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// InCgroups is argv run by a shell that first joins the cgroup folders
// dirs (MakeCgroup's) and then becomes argv (same pid): moving it from
// outside after it started would miss what it forked meanwhile.
func InCgroups(dirs []string, argv ...string) []string {
	out := []string{"sh", "-c", `n=$1; shift
while [ "$n" -gt 0 ]; do echo $$ >"$1" || exit 125; shift; n=$((n-1)); done
exec "$@"`, "sh", strconv.Itoa(len(dirs))}
	for _, d := range dirs {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	return append(out, argv...)
}

// WriteOwner makes process pid the owner of run id's state folder: Clean
// leaves the run alone while that process lives. Create makes cnperf
// itself the owner; a run that outlives cnperf (the local Kubernetes
// cluster) names one of its own processes instead.
func WriteOwner(id string, pid int) error {
	return os.WriteFile(filepath.Join(StateRoot, id, "owner"), []byte(ownerStamp(pid)), 0o644)
}

// Err is how the process ended, once Done is closed.
func (p *Proc) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Stop asks the process to end (SIGTERM), then kills it after a grace period.
func (p *Proc) Stop() {
	p.once.Do(func() {
		if p.Cmd.Process == nil {
			return
		}
		_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(2 * time.Second):
			_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	})
}

// LogTail returns the end of a process's log, for error messages.
func (l *Lab) LogTail(name string, n int) string {
	b, err := os.ReadFile(filepath.Join(l.Dir, name+".log"))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// nsPIDs lists the processes whose network namespace is one of nss, in
// one look through /proc however many namespaces there are.
func nsPIDs(nss []string) []int {
	type key struct{ dev, ino uint64 }
	want := map[key]bool{}
	for _, ns := range nss {
		var st syscall.Stat_t
		if syscall.Stat("/run/netns/"+ns, &st) == nil {
			want[key{st.Dev, st.Ino}] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+e.Name()+"/ns/net", &st) != nil {
			continue
		}
		if want[key{st.Dev, st.Ino}] {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killNSProcs kills every process inside namespaces nss, and waits until
// none is left (or a second has passed).
func killNSProcs(nss []string) {
	for try := 0; try < 50; try++ {
		pids := nsPIDs(nss)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Leftover is one run's leftovers found by Clean.
type Leftover struct {
	ID         string
	Namespaces []string
	Dir        bool
	Cgroup     bool // it has a cgroup cnperf-<id> (RunCgroup)
	Live       bool // its owner process is still running
}

// FindLeftovers lists every cnperf namespace and state folder on this machine,
// grouped by run id.
func FindLeftovers() ([]Leftover, error) {
	byID := map[string]*Leftover{}
	get := func(id string) *Leftover {
		if byID[id] == nil {
			byID[id] = &Leftover{ID: id}
		}
		return byID[id]
	}
	ents, err := os.ReadDir("/run/netns")
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, Prefix) {
			continue
		}
		id, _, _ := strings.Cut(strings.TrimPrefix(name, Prefix), "-")
		lo := get(id)
		lo.Namespaces = append(lo.Namespaces, name)
	}
	dirs, _ := os.ReadDir(StateRoot)
	for _, d := range dirs {
		get(d.Name()).Dir = true
	}
	for _, id := range leftoverCgroupIDs() {
		get(id).Cgroup = true
	}
	var out []Leftover
	for id, lo := range byID {
		lo.Live = ownerAlive(id)
		out = append(out, *lo)
	}
	return out, nil
}

// ownerStamp identifies a process for the lifetime of the machine: its pid
// and its start time (field 22 of /proc/PID/stat), so a reused pid does not
// pass for the owner.
func ownerStamp(pid int) string {
	return fmt.Sprintf("%d %s", pid, startTime(pid))
}

// startTime is a live process's start time; "" when there is no such
// process or only its zombie (killed, not yet reaped: it holds nothing).
func startTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	return statStart(string(b))
}

// statStart reads the start time from a /proc/PID/stat line, "" for a
// zombie or a line it cannot read.
func statStart(s string) string {
	// the command name (field 2) may hold spaces: count fields after ")"
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		f := strings.Fields(s[i+1:])
		if len(f) > 19 && f[0] != "Z" {
			return f[19]
		}
	}
	return ""
}

func ownerAlive(id string) bool {
	b, err := os.ReadFile(filepath.Join(StateRoot, id, "owner"))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return false
	}
	st := startTime(pid)
	if st == "" {
		return false
	}
	return len(f) < 2 || f[1] == st
}

// Clean removes leftovers of runs whose owner is gone (or of every run, with
// force): it kills processes inside their cgroups (RunCgroup) and their
// namespaces, deletes the cgroups, the namespaces and the state folders.
func Clean(force bool) ([]Leftover, error) { return CleanRun("", force) }

// OfRun reports whether lab id belongs to run: the run's first lab has
// the run id itself, the labs beside it the run id, "s" and a number.
func OfRun(id, run string) bool {
	if id == run {
		return true
	}
	rest, ok := strings.CutPrefix(id, run+"s")
	if !ok || rest == "" {
		return false
	}
	for _, r := range rest {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// CleanRun is Clean limited to one run id and the labs beside its first
// ("" for every run).
func CleanRun(id string, force bool) ([]Leftover, error) {
	los, err := FindLeftovers()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var removed []Leftover
	var firstErr error
	for _, lo := range los {
		if (lo.Live && !force) || (id != "" && !OfRun(lo.ID, id)) {
			continue
		}
		// the cgroup first: processes there (pods) may hold namespaces
		if lo.Cgroup {
			if err := removeRunCgroups(lo.ID); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		nl := iproute.NewNetlink()
		if errs := removeNamespaces(ctx, OSExec{}, nl, 4*runtime.NumCPU(), lo.Namespaces); len(errs) > 0 && firstErr == nil {
			firstErr = errs[0]
		}
		if lo.Dir {
			_ = os.RemoveAll(filepath.Join(StateRoot, lo.ID))
		}
		removed = append(removed, lo)
	}
	if err := ReleaseCgroup2(); err != nil && firstErr == nil {
		firstErr = err
	}
	_ = os.Remove(StateRoot) // only when no run holds a folder in it
	return removed, firstErr
}
