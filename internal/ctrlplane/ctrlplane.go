// Package ctrlplane holds what cnperf's control planes share: starting a
// daemon inside a lab namespace (recorded, not run, when the lab only
// records commands for golden tests), and reading a daemon's CPU time so a
// user-space datapath's cost shows next to the agents'. The control planes
// themselves live in subpackages (etcd).
package ctrlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
)

// Start runs argv in namespace ns through l.Start. When the lab records
// commands instead of running them it records the command line (with a
// trailing " &") and returns nil: golden tests see the daemon's exact flags
// without root.
func Start(l *lab.Lab, ns, name string, argv ...string) (*lab.Proc, error) {
	if rec, ok := l.Cfg.Exec.(*lab.Recorder); ok {
		line := append(append([]string{"ip", "netns", "exec", ns}, argv...), "&")
		_, _ = rec.Run(context.Background(), line)
		return nil, nil
	}
	return l.Start(ns, name, argv...)
}

// Recording reports whether l only records commands (golden tests).
func Recording(l *lab.Lab) bool {
	_, ok := l.Cfg.Exec.(*lab.Recorder)
	return ok
}

// clockTicks is USER_HZ, 100 on every Linux architecture cnperf runs on.
const clockTicks = 100

// CPUSeconds is the user+system CPU time of process pid so far, read from
// /proc/PID/stat (fields 14 and 15, in clock ticks).
func CPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

func parseStatCPU(stat string) (float64, error) {
	// the command name (field 2) may hold spaces; fields restart after ')'
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc stat line")
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc stat line")
	}
	// f[0] is field 3 (state); utime is field 14, stime field 15
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed /proc stat times")
	}
	return float64(ut+st) / clockTicks, nil
}

// ProcsCPU sums CPUSeconds over procs that are still running.
func ProcsCPU(procs []*lab.Proc) float64 {
	var sum float64
	for _, p := range procs {
		if p == nil || p.Cmd == nil || p.Cmd.Process == nil {
			continue
		}
		if s, err := CPUSeconds(p.Cmd.Process.Pid); err == nil {
			sum += s
		}
	}
	return sum
}

// WaitLog waits until the log of process name (started with Start) has a
// line equal to want, or the process exits, or limit passes. A recording
// lab returns at once.
func WaitLog(ctx context.Context, l *lab.Lab, p *lab.Proc, name, want string, limit time.Duration) error {
	if Recording(l) {
		return nil
	}
	deadline := time.Now().Add(limit)
	for {
		b, _ := os.ReadFile(filepath.Join(l.Dir, name+".log"))
		for _, line := range strings.Split(string(b), "\n") {
			if line == want {
				return nil
			}
		}
		if p != nil {
			select {
			case <-p.Done():
				return fmt.Errorf("%s exited: %s", name, l.LogTail(name, 5))
			default:
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no %q after %v (log: %s)", name, want, limit, l.LogTail(name, 5))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
