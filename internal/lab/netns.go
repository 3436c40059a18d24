package lab

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// InNetNS runs f on an OS thread switched into network namespace ns (a
// name under /run/netns, or a path such as /proc/PID/ns/net), then moves
// the thread back: sockets and links made in f, and processes forked by
// it, belong to ns. Goroutines f starts do not inherit the namespace. The
// thread is locked throughout; should moving it back fail, it stays
// locked, so Go retires it with the goroutine rather than reuse it in the
// wrong namespace.
//
// It is the one "enter a namespace and come back" of cnperf.
func InNetNS(ns string, f func() error) error {
	path := ns
	if !strings.HasPrefix(ns, "/") {
		path = "/run/netns/" + ns
	}
	runtime.LockOSThread()
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer unix.Close(orig)
	target, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("opening namespace %s: %w", ns, err)
	}
	defer unix.Close(target)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("entering namespace %s: %w", ns, err)
	}
	ferr := f()
	if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
		return errors.Join(ferr, fmt.Errorf("returning from namespace %s: %w", ns, err))
	}
	runtime.UnlockOSThread()
	return ferr
}

// SocketIn opens a socket inside network namespace ns (as InNetNS names
// it): a socket stays in the namespace it was made in.
func SocketIn(ns string, domain, typ, proto int) (int, error) {
	fd := -1
	err := InNetNS(ns, func() error {
		var err error
		fd, err = unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
		return err
	})
	if err != nil && fd >= 0 {
		unix.Close(fd)
		return -1, err
	}
	return fd, err
}
