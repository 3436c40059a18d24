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
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, pid, errBusy
		}
		return nil, 0, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &lockFile{f: f}, 0, nil
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
	l, pid, err := tryLock(c.cfg.Lock)
	if errors.Is(err, errBusy) {
		who := "another `cnperf cluster up`"
		if pid > 0 {
			who += fmt.Sprintf(" (pid %d)", pid)
		}
		return nil, fmt.Errorf("%s is running; wait for it, or stop it with `cnperf cluster down`", who)
	}
	return l, err
}

// lockDown is Down's lock. An up still running holds it: Down asks that
// up to stop (SIGTERM: it tears down what it built, then exits) and waits
// for it, at most as long as a teardown may take.
func (c *Cluster) lockDown() (*lockFile, error) {
	l, pid, err := tryLock(c.cfg.Lock)
	if !errors.Is(err, errBusy) {
		return l, err
	}
	if pid > 0 && pid != os.Getpid() {
		c.logf("down: stopping the `cnperf cluster up` still running (pid %d)", pid)
		_ = syscall.Kill(pid, syscall.SIGTERM)
	} else {
		c.logf("down: waiting for the `cnperf cluster up` still running to end")
	}
	limit := c.cfg.Grace + c.cfg.StopLimit + 30*time.Second
	for end := time.Now().Add(limit); time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
		if l, _, err = tryLock(c.cfg.Lock); !errors.Is(err, errBusy) {
			return l, err
		}
	}
	return nil, fmt.Errorf("the `cnperf cluster up` holding %s did not end within %v; stop it (kill %d), then down again", c.cfg.Lock, limit, pid)
}
