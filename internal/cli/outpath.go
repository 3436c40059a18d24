package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CheckOutDir refuses, before any work, an output folder that is a file,
// whose parent does not exist (cnperf makes the folder, not its parents),
// or that cannot be written.
func CheckOutDir(flagName, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return fmt.Errorf("%s %s: not a folder; name a folder for the files, such as out/", flagName, dir)
	case err == nil:
		return writable(flagName, dir, dir)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return fmt.Errorf("%s %s: folder %s does not exist; create it first or choose another path", flagName, dir, parent)
	}
	return writable(flagName, dir, parent)
}

// CheckOutFile refuses, before any work, an output file whose folder does
// not exist, is not writable or is under /proc or /sys, or that exists and
// is not a regular file.
func CheckOutFile(flagName, path, example string) error {
	if path == "" {
		return fmt.Errorf("%s \"\" is empty; give a file such as %s, or leave the flag out", flagName, example)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s %s: folder %s does not exist; create it first or choose another path", flagName, path, dir)
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s %s: not a regular file; choose a file path such as %s", flagName, path, example)
	}
	return writable(flagName, path, dir)
}

// writable probes dir with a temporary file, and refuses the kernel's
// pseudo-filesystems (where a write may succeed and mean something else).
func writable(flagName, path, dir string) error {
	if real, err := filepath.EvalSymlinks(dir); err == nil && (real == "/proc" || strings.HasPrefix(real, "/proc/") || real == "/sys" || strings.HasPrefix(real, "/sys/")) {
		return fmt.Errorf("%s %s: cannot write under %s; choose a path in an ordinary folder", flagName, path, real)
	}
	f, err := os.CreateTemp(dir, ".cnperf-probe-*")
	if err != nil {
		return fmt.Errorf("%s %s: cannot write in %s (%v); choose a writable folder", flagName, path, dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}
