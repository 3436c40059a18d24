// Package sock gives workloads plain blocking sockets, as netperf and
// sockperf use: one OS thread blocks in read/write per flow, with no
// netpoller in the path, so cnperf's round trips compare with theirs.
// Cancellation is by shutdown(2), which wakes a blocked call.
package sock

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// FD is a blocking socket.
type FD struct {
	fd     int
	closed bool
	mu     sync.Mutex
}

func sockaddr(ap netip.AddrPort) unix.Sockaddr {
	return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
}

func typ(proto string) (int, error) {
	switch proto {
	case "tcp":
		return unix.SOCK_STREAM, nil
	case "udp":
		return unix.SOCK_DGRAM, nil
	}
	return 0, fmt.Errorf("sock: unknown protocol %q", proto)
}

// Listen binds proto on 0.0.0.0:port (TCP listens with a deep backlog).
func Listen(proto string, port int) (*FD, error) {
	t, err := typ(proto)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_INET, t|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("binding %s port %d: %w", proto, port, err)
	}
	if t == unix.SOCK_STREAM {
		if err := unix.Listen(fd, 4096); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("listen: %w", err)
		}
	}
	return &FD{fd: fd}, nil
}

// Dial connects proto to addr.
func Dial(proto string, addr netip.AddrPort) (*FD, error) { return DialTimeout(proto, addr, 0) }

// DialTimeout is Dial whose socket gives up on a blocked connect, and on any
// later blocked read or write, after timeout (SO_SNDTIMEO/SO_RCVTIMEO);
// zero means never.
func DialTimeout(proto string, addr netip.AddrPort, timeout time.Duration) (*FD, error) {
	t, err := typ(proto)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_INET, t|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	if t == unix.SOCK_STREAM {
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	if timeout > 0 {
		tv := unix.NsecToTimeval(timeout.Nanoseconds())
		_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
		_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	}
	if _, err := Again(func() (int, error) { return 0, unix.Connect(fd, sockaddr(addr)) }); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("connecting to %s/%s: %w", addr, proto, err)
	}
	return &FD{fd: fd}, nil
}

// Accept waits for a connection.
func (s *FD) Accept() (*FD, error) {
	for {
		nfd, _, err := unix.Accept4(s.fd, unix.SOCK_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		_ = unix.SetsockoptInt(nfd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		return &FD{fd: nfd}, nil
	}
}

// Read reads once; 0 with nil error means the peer closed.
func (s *FD) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(s.fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if n < 0 {
			n = 0
		}
		return n, err
	}
}

// ReadFull reads exactly len(b) bytes; it returns false when the peer closed first.
func (s *FD) ReadFull(b []byte) (bool, error) {
	for off := 0; off < len(b); {
		n, err := s.Read(b[off:])
		if err != nil {
			return false, err
		}
		if n == 0 {
			return false, nil
		}
		off += n
	}
	return true, nil
}

// WriteAll writes all of b.
func (s *FD) WriteAll(b []byte) error {
	for off := 0; off < len(b); {
		n, err := unix.Write(s.fd, b[off:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		off += n
	}
	return nil
}

// Write writes once (a datagram, for UDP).
func (s *FD) Write(b []byte) (int, error) {
	for {
		n, err := unix.Write(s.fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return n, err
	}
}

// RecvFrom reads a datagram and its sender.
func (s *FD) RecvFrom(b []byte) (int, unix.Sockaddr, error) {
	for {
		n, from, err := unix.Recvfrom(s.fd, b, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return n, from, err
	}
}

// SendTo sends a datagram to a peer.
func (s *FD) SendTo(b []byte, to unix.Sockaddr) error {
	for {
		err := unix.Sendto(s.fd, b, 0, to)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err
	}
}

// SetRecvTimeout bounds a blocked receive (SO_RCVTIMEO).
func (s *FD) SetRecvTimeout(usec int64) error {
	tv := unix.NsecToTimeval(usec * 1000)
	return unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
}

// SetTimeouts sets both SO_RCVTIMEO and SO_SNDTIMEO, bounding how long a
// raw call can block.
func (s *FD) SetTimeouts(usec int64) error {
	tv := unix.NsecToTimeval(usec * 1000)
	if err := unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return err
	}
	return unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
}

// Port is the local port the socket is bound to.
func (s *FD) Port() (int, error) {
	sa, err := unix.Getsockname(s.fd)
	if err != nil {
		return 0, err
	}
	if in, ok := sa.(*unix.SockaddrInet4); ok {
		return in.Port, nil
	}
	return 0, fmt.Errorf("sock: not an IPv4 socket")
}

// SetNoDelay sets or clears TCP_NODELAY. Dial and Accept set it (round
// trips must not wait for Nagle); a bulk stream clears it, as netperf's
// TCP_STREAM, iperf and nuttcp leave Nagle on unless asked.
func (s *FD) SetNoDelay(on bool) error {
	v := 0
	if on {
		v = 1
	}
	return unix.SetsockoptInt(s.fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, v)
}

// NoDelay reports whether TCP_NODELAY is set.
func (s *FD) NoDelay() (bool, error) {
	v, err := unix.GetsockoptInt(s.fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
	return v != 0, err
}

// SetBuffers sets SO_SNDBUF and SO_RCVBUF when n > 0.
func (s *FD) SetBuffers(n int) {
	if n > 0 {
		_ = unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, n)
		_ = unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_RCVBUF, n)
	}
}

// Shutdown wakes any call blocked on the socket; the socket stays open.
// After Close it does nothing, so a watcher goroutine that fires late can
// never touch a descriptor number the process has since reused.
func (s *FD) Shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		_ = unix.Shutdown(s.fd, unix.SHUT_RDWR)
	}
}

// CloseWrite half-closes (FIN) so the peer reads end of stream.
func (s *FD) CloseWrite() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		_ = unix.Shutdown(s.fd, unix.SHUT_WR)
	}
}

// Close releases the socket once.
func (s *FD) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return unix.Close(s.fd)
}

// Raw is the descriptor number.
func (s *FD) Raw() int { return s.fd }

// Raw I/O: the hot loops of the request/response workloads read and write
// with raw system calls, so the Go scheduler does not treat the thread as
// blocked: sysmon does not hand its P away after 20 µs and the thread does
// not have to win a P back when the reply lands, which on a VM added tens of
// microseconds to some round trips. A raw call cannot be preempted, so the
// socket must carry a receive timeout (SetRecvTimeout) that bounds how long
// a garbage collection can be held up; EAGAIN then just means "again".

// ReadRaw reads once with a raw system call.
func (s *FD) ReadRaw(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(s.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// WriteRaw writes once with a raw system call.
func (s *FD) WriteRaw(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(s.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// ReadFullRaw reads exactly len(b) bytes with raw calls, retrying on a
// receive timeout until stop reports true. It returns false when the peer
// closed first.
func (s *FD) ReadFullRaw(b []byte, stop func() bool) (bool, error) {
	for off := 0; off < len(b); {
		n, err := s.ReadRaw(b[off:])
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				if stop() {
					return false, err
				}
				continue
			}
			return false, err
		}
		if n == 0 {
			return false, nil
		}
		off += n
	}
	return true, nil
}

// WriteAllRaw writes all of b with raw calls.
func (s *FD) WriteAllRaw(b []byte) error {
	for off := 0; off < len(b); {
		n, err := s.WriteRaw(b[off:])
		if err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			return err
		}
		off += n
	}
	return nil
}

// Again repeats a blocking socket call a signal interrupted. A socket with
// SO_RCVTIMEO or SO_SNDTIMEO set is never restarted by the kernel
// (signal(7)), and Go's runtime signals its threads (SIGURG preemption),
// so on a busy machine such a call can fail with EINTR having done
// nothing. Linux lets a blocking connect be called again too: it waits for
// the one under way.
func Again(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}
