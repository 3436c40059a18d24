package result

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// CheckReplace refuses to let a run replace what it should not: a
// symlink (the run would put a regular file in its place) or an existing
// file that is not a cnperf results file, unless force. An empty file
// (mktemp's) may be replaced.
func CheckReplace(path string, force bool) error {
	st, err := os.Lstat(path)
	if err != nil || force {
		return nil // nothing there, or the user said so
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("--out %s is a symlink; the results would replace it with a file: name the file it points to, or add --force", path)
	}
	if !st.Mode().IsRegular() || st.Size() == 0 {
		return nil
	}
	if !IsResultsFile(path) {
		return fmt.Errorf("--out %s exists and is not a cnperf results file; choose another path, or add --force to replace it", path)
	}
	return nil
}

// IsResultsFile says whether path begins as a file `cnperf run` writes
// does: a JSON object whose first key is "schema", a cnperf schema.
func IsResultsFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, 4096))
	for _, want := range []func(json.Token) bool{
		func(t json.Token) bool { return t == json.Delim('{') },
		func(t json.Token) bool { return t == "schema" },
		func(t json.Token) bool {
			s, ok := t.(string)
			return ok && strings.HasPrefix(s, strings.TrimSuffix(Schema, "v1"))
		},
	} {
		t, err := dec.Token()
		if err != nil || !want(t) {
			return false
		}
	}
	return true
}

// Lock is an exclusive lock on a results path, so that two runs
// writing one file refuse instead of losing one run. The results file
// itself is replaced by a rename at every write, so it cannot hold a
// lock: the lock is a file named by the results' absolute path in
// LockDir, outside the user's folder (a run killed with -9 leaves it
// there, holding no lock; the next run takes it over), removed when
// released.
type Lock struct {
	f    *os.File
	path string
}

// LockDir holds the lock files: /run/cnperf-locks for root (every lab run),
// a folder of the user's own in the temporary folder otherwise.
func LockDir() string {
	if os.Geteuid() == 0 {
		return "/run/cnperf-locks"
	}
	return filepath.Join(os.TempDir(), "cnperf-locks-"+strconv.Itoa(os.Geteuid()))
}

// ownFolder refuses a lock folder that is not this user's own: a user's
// is at a fixed name in the shared temporary folder, where another user
// could have made it first (or a link of that name), to read or break
// its locks.
func ownFolder(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || !ok || int(sys.Uid) != os.Geteuid() || st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("the lock folder %s is not this user's own (a link, another owner, or writable by others); remove it", dir)
	}
	return nil
}

// LockPath is the lock file of results path: one per file, whatever
// relative path or symlinked folder names it.
func LockPath(path string) string {
	abs, err := filepath.Abs(path)
	if err == nil {
		if dir, derr := filepath.EvalSymlinks(filepath.Dir(abs)); derr == nil {
			abs = filepath.Join(dir, filepath.Base(abs))
		}
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(LockDir(), hex.EncodeToString(sum[:12])+".lock")
}

// LockFile takes the lock of results path, or says which run holds it.
func LockFile(path string) (*Lock, error) {
	lp := LockPath(path)
	for range 10 {
		if err := os.MkdirAll(filepath.Dir(lp), 0o700); err != nil {
			return nil, fmt.Errorf("--out %s: making its lock: %v", path, err)
		}
		if err := ownFolder(filepath.Dir(lp)); err != nil {
			return nil, fmt.Errorf("--out %s: %v", path, err)
		}
		f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o644)
		if errors.Is(err, os.ErrNotExist) {
			continue // the folder went with another run's last lock
		}
		if err != nil {
			return nil, fmt.Errorf("--out %s: locking it: %v; choose a writable folder", path, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			b, _ := io.ReadAll(io.LimitReader(f, 32))
			f.Close()
			holder := "another cnperf run"
			first, _, _ := strings.Cut(string(b), "\n")
			if pid, perr := strconv.Atoi(strings.TrimSpace(first)); perr == nil && pid > 0 {
				holder += fmt.Sprintf(" (pid %d)", pid)
			}
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("--out %s: %s is writing it; choose another --out, or wait for that run to end", path, holder)
			}
			return nil, fmt.Errorf("--out %s: locking it: %v", path, err)
		}
		// the file locked must still be the one at lp: a run that ended
		// removes it, and a lock on a removed file locks nothing
		var fst, pst syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &fst) != nil || syscall.Stat(lp, &pst) != nil || fst.Ino != pst.Ino || fst.Dev != pst.Dev {
			f.Close()
			continue
		}
		_ = f.Truncate(0)
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"+path+"\n"), 0)
		return &Lock{f: f, path: lp}, nil
	}
	return nil, fmt.Errorf("--out %s: could not lock it (its lock file %s keeps changing)", path, lp)
}

// Release removes the lock file and drops the lock; harmless twice.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = os.Remove(l.path)
	l.f.Close()
	l.f = nil
	_ = os.Remove(filepath.Dir(l.path)) // only when no other run holds one
}

// UnusedPath is path, or path with -2, -3... before its extension when a
// file (or a run's lock) is there already: two runs started in the same
// second get a default file each.
func UnusedPath(path string) string {
	ext := filepath.Ext(path)
	stem := strings.TrimSuffix(path, ext)
	for i := 1; ; i++ {
		p := path
		if i > 1 {
			p = stem + "-" + strconv.Itoa(i) + ext
		}
		_, err1 := os.Lstat(p)
		_, err2 := os.Lstat(LockPath(p))
		if errors.Is(err1, os.ErrNotExist) && errors.Is(err2, os.ErrNotExist) || i == 1000 {
			return p
		}
	}
}

// CleanStaleLocks removes the results locks no run holds (left by runs
// killed with -9); a lock a live run holds stays.
func CleanStaleLocks() {
	ents, _ := os.ReadDir(LockDir())
	for _, e := range ents {
		p := filepath.Join(LockDir(), e.Name())
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			_ = os.Remove(p)
		}
		f.Close()
	}
	_ = os.Remove(LockDir()) // only when empty
}
