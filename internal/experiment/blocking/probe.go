package blocking

import (
	"bytes"
	"fmt"
	"net/netip"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// httpGetIn sends one HTTP/1.0 GET to addr from inside network namespace
// ns (a lab namespace under /run/netns) and checks the answer is a 200:
// the socket is made in ns, the rest of the exchange needs no namespace.
func httpGetIn(ns string, addr netip.AddrPort, timeout time.Duration) error {
	fd, err := socketIn(ns)
	if err != nil {
		return fmt.Errorf("socket in %s: %w", ns, err)
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(timeout.Nanoseconds())
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().As4()}); err != nil {
		return fmt.Errorf("connect %s: %w", addr, err)
	}
	if _, err := unix.Write(fd, []byte("GET / HTTP/1.0\r\nHost: cnperf\r\n\r\n")); err != nil {
		return fmt.Errorf("send to %s: %w", addr, err)
	}
	var got []byte
	buf := make([]byte, 4096)
	for len(got) < 12 {
		n, err := unix.Read(fd, buf)
		if err != nil {
			return fmt.Errorf("read from %s: %w", addr, err)
		}
		if n == 0 {
			break
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.HasPrefix(got, []byte("HTTP/1.")) || len(got) < 12 || string(got[9:12]) != "200" {
		line, _, _ := bytes.Cut(got, []byte("\r\n"))
		return fmt.Errorf("%s answered %q", addr, line)
	}
	// drain the rest so the server's close is not a reset
	for {
		n, err := unix.Read(fd, buf)
		if n <= 0 || err != nil {
			return nil
		}
	}
}

// socketIn makes a blocking TCP socket inside namespace ns.
func socketIn(ns string) (int, error) {
	runtime.LockOSThread()
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return -1, err
	}
	defer unix.Close(orig)
	target, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return -1, err
	}
	defer unix.Close(target)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return -1, err
	}
	fd, serr := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
		// the thread stays locked and ends with its goroutine
		if serr == nil {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("returning from %s: %w", ns, err)
	}
	runtime.UnlockOSThread()
	return fd, serr
}
