package kubelocal

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockFile is an exclusive flock on a file, held while the file is open.
// Up holds cfg.Lock for as long as it runs, its pid written inside; Down
// takes it too, so that an up that fails late tears down only what it
// built itself, never a cluster a newer up is building.
type lockFile struct{ f *os.File }

var errBusy = errors.New("lock held")

// tryLock takes the lock at path without waiting; when another process
// holds it, it returns errBusy and that process's pid (0 if unknown).
func tryLock(path string) (*lockFile, int, error) {
	l, h, err := tryLockAs(path, "")
	return l, h.pid, err
}

// holder is who holds a lock: its pid and role ("up", "down", or "" when
// unknown: a lock written by an older cnperf, whose holder may be an up).
type holder struct {
	pid  int
	role string
}

// tryLockAs is tryLock writing role beside the pid, and returning the
// holder when busy: down must tell an up it may stop from another down
// it must only wait for.
func tryLockAs(path, role string) (*lockFile, holder, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, holder{}, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, parseHolder(b), errBusy
		}
		return nil, holder{}, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strings.TrimSpace(strconv.Itoa(os.Getpid())+" "+role)+"\n"), 0)
	}
	return &lockFile{f: f}, holder{}, nil
}

// unlock releases the lock; the file stays (removing it would let two
// processes lock two different files of one name).
func (l *lockFile) unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = l.f.Close()
	l.f = nil
}

// lockUp is Up's lock: refused at once while another up runs.
func (c *Cluster) lockUp() (*lockFile, error) {
	l, h, err := tryLockAs(c.cfg.Lock, "up")
	if errors.Is(err, errBusy) {
		if h.role == "down" {
			return nil, fmt.Errorf("a `cnperf cluster down` (pid %d) is running; up again once it has ended", h.pid)
		}
		who := "another `cnperf cluster up`"
		if h.pid > 0 {
			who += fmt.Sprintf(" (pid %d)", h.pid)
		}
		return nil, fmt.Errorf("%s is running; wait for it, or stop it with `cnperf cluster down`", who)
	}
	return l, err
}

// lockDown is Down's lock. An up still running holds it: Down asks that
// up to stop (SIGTERM: it tears down what it built, then exits) and waits
// for it, at most as long as a teardown may take.
//
// Another down holding it is only waited for (it removes the same
// cluster); the down that follows finds little or nothing left.
func (c *Cluster) lockDown() (*lockFile, error) {
	l, h, err := tryLockAs(c.cfg.Lock, "down")
	if !errors.Is(err, errBusy) {
		return l, err
	}
	what := "`cnperf cluster up`"
	switch {
	case h.role == "down":
		what = "`cnperf cluster down`"
		c.logf("down: waiting for the %s still running (pid %d) to end", what, h.pid)
	case h.pid > 0 && h.pid != os.Getpid():
		c.logf("down: stopping the %s still running (pid %d)", what, h.pid)
		_ = syscall.Kill(h.pid, syscall.SIGTERM)
	default:
		c.logf("down: waiting for the %s still running to end", what)
	}
	limit := c.cfg.Grace + c.cfg.StopLimit + 30*time.Second
	for end := time.Now().Add(limit); time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
		if l, _, err = tryLockAs(c.cfg.Lock, "down"); !errors.Is(err, errBusy) {
			return l, err
		}
	}
	return nil, fmt.Errorf("the %s holding %s did not end within %v; stop it (kill %d), then down again", what, c.cfg.Lock, limit, h.pid)
}

// lockHolder reports whether someone holds the lock at path, and who,
// without taking it (a shared lock, given back at once) nor writing.
func lockHolder(path string) (holder, bool) {
	f, err := os.Open(path)
	if err != nil {
		return holder{}, false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return holder{}, false
	}
	b, _ := os.ReadFile(path)
	return parseHolder(b), true
}

// parseHolder reads a lock file's "PID ROLE".
func parseHolder(b []byte) holder {
	var h holder
	if f := strings.Fields(string(b)); len(f) > 0 {
		h.pid, _ = strconv.Atoi(f[0])
		if len(f) > 1 {
			h.role = f[1]
		}
	}
	return h
}
