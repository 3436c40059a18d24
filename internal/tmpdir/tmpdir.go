// Package tmpdir makes cnperf's temporary folders and finds the ones that
// dead processes left. Root writing at a fixed name under /tmp follows
// whatever another local user put there first (a link to /etc...), so
// every folder has an unpredictable name and mode 0700 (os.MkdirTemp);
// its name starts with Prefix and the pid and start time of the process
// that made it, so that `cnperf clean` can tell a folder a live process
// still uses from one a killed process left.
package tmpdir

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Prefix starts the name of every temporary folder cnperf makes:
// cnperf-tmp-PID.START-KIND-RANDOM.
const Prefix = "cnperf-tmp-"

// Make makes a fresh temporary folder (mode 0700) for kind ("nginx"...).
func Make(kind string) (string, error) {
	return os.MkdirTemp("", Prefix+stamp(os.Getpid())+"-"+kind+"-")
}

// stamp is "PID.START": a pid alone may be reused by a later process.
func stamp(pid int) string { return strconv.Itoa(pid) + "." + startTime(pid) }

// startTime is process pid's start time in clock ticks since boot (field
// 22 of /proc/PID/stat), or "" when there is no such process.
func startTime(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// the command name, field 2, is in parentheses and may hold spaces
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// Leftovers lists cnperf's temporary folders in dir (os.TempDir() when
// "") whose process is gone.
func Leftovers(dir string) []string {
	if dir == "" {
		dir = os.TempDir()
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), Prefix)
		if !ok || !e.IsDir() {
			continue
		}
		owner, _, _ := strings.Cut(rest, "-")
		pid, start, _ := strings.Cut(owner, ".")
		n, err := strconv.Atoi(pid)
		if err != nil || n <= 0 {
			continue // not one of ours after all: leave it
		}
		if startTime(n) == start && start != "" {
			continue // its process lives
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out
}

// Clean removes Leftovers(dir), one line each on out.
func Clean(dir string, out io.Writer) error {
	var first error
	for _, p := range Leftovers(dir) {
		if err := os.RemoveAll(p); err != nil {
			if first == nil {
				first = fmt.Errorf("removing the temporary folder %s: %w", p, err)
			}
			continue
		}
		fmt.Fprintf(out, "removed temporary folder %s (its process is gone)\n", p)
	}
	return first
}

// ReplaceFile writes path whole or not at all: write fills a temporary
// file of pattern (os.CreateTemp) in path's folder, which is synced,
// made 0644 and renamed over path; on any failure the temporary file is
// removed and path is left as it was. The one way cnperf replaces a file
// (results after every cell, every export).
func ReplaceFile(path, pattern string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), pattern)
	if err != nil {
		return fmt.Errorf("%w; choose a file in a writable folder", err)
	}
	tmp := f.Name()
	werr := write(f)
	if werr == nil {
		werr = f.Sync() // the rename must not land before the data
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return werr
	}
	return nil
}
