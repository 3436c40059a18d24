package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// ErrStopped, ErrExited and ErrGone are the causes Health finds: the
// agent's process stopped (SIGSTOP, a debugger), ended, or its container
// or pod removed.
var (
	ErrStopped = errors.New("stopped")
	ErrExited  = errors.New("exited")
	ErrGone    = errors.New("removed")
)

// Cause is a Health error: its text is msg, and errors.Is(err, kind) holds
// (kind is ErrStopped, ErrExited or ErrGone).
func Cause(kind error, msg string) error { return &cause{kind, msg} }

type cause struct {
	kind error
	msg  string
}

func (c *cause) Error() string { return c.msg }
func (c *cause) Unwrap() error { return c.kind }

// ProcessHealth is a Health for an agent that is process pid of this
// machine's kernel (the lab's agents; a local engine's containers): it
// reads /proc/PID/stat, and a process of the same pid started later is not
// taken for it. A pid that is gone already is reported exited (an engine
// may still call its container running for a while after a kill); it
// returns nil when pid is not positive or cannot be read now.
func ProcessHealth(pid int) func(context.Context) error {
	if pid <= 0 {
		return nil
	}
	_, start, err := procStat(pid)
	if errors.Is(err, fs.ErrNotExist) {
		gone := Cause(ErrExited, fmt.Sprintf("its process %d has exited", pid))
		return func(context.Context) error { return gone }
	}
	if err != nil {
		return nil
	}
	return func(context.Context) error { return processState(pid, start) }
}

// processState says what became of process pid started at start (clock
// ticks after boot): nil while it runs or sleeps.
func processState(pid int, start uint64) error {
	state, st, err := procStat(pid)
	switch {
	case errors.Is(err, fs.ErrNotExist) || (err == nil && st != start):
		return Cause(ErrExited, fmt.Sprintf("its process %d has exited", pid))
	case err != nil:
		return nil // unreadable: nothing to say
	}
	switch state {
	case 'T':
		return Cause(ErrStopped, fmt.Sprintf("its process %d is stopped (SIGSTOP); `kill -CONT %d` resumes it", pid, pid))
	case 't':
		return Cause(ErrStopped, fmt.Sprintf("its process %d is stopped by a debugger (traced)", pid))
	case 'Z', 'X':
		return Cause(ErrExited, fmt.Sprintf("its process %d has exited", pid))
	}
	return nil
}

// procStat reads a process's state letter and start time from
// /proc/PID/stat (fields 3 and 22; the command, field 2, may hold spaces
// and parentheses, so fields are counted after its last ')').
func procStat(pid int) (byte, uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: start time %q", pid, f[19])
	}
	return f[0][0], start, nil
}
