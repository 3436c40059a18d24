package blocking

import (
	"bytes"
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/workload/sock"
)

// httpGetIn sends one HTTP/1.0 GET to addr from inside network namespace
// ns (a lab namespace under /run/netns) and checks the answer is a 200:
// the socket is made in ns, the rest of the exchange needs no namespace.
func httpGetIn(ns string, addr netip.AddrPort, timeout time.Duration) error {
	fd, err := lab.SocketIn(ns, unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		return fmt.Errorf("socket in %s: %w", ns, err)
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(timeout.Nanoseconds())
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	// with timeouts set, a signal (Go's preemption) interrupts these calls
	// for good (signal(7)): repeat them (Linux lets a blocking connect be
	// called again to wait for the one under way)
	sa := &unix.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().As4()}
	if _, err := sock.Again(func() (int, error) { return 0, unix.Connect(fd, sa) }); err != nil {
		return fmt.Errorf("connect %s: %w", addr, err)
	}
	if _, err := sock.Again(func() (int, error) { return unix.Write(fd, []byte("GET / HTTP/1.0\r\nHost: cnperf\r\n\r\n")) }); err != nil {
		return fmt.Errorf("send to %s: %w", addr, err)
	}
	var got []byte
	buf := make([]byte, 4096)
	for len(got) < 12 {
		n, err := sock.Again(func() (int, error) { return unix.Read(fd, buf) })
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
		n, err := sock.Again(func() (int, error) { return unix.Read(fd, buf) })
		if n <= 0 || err != nil {
			return nil
		}
	}
}
