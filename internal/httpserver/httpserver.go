// Package httpserver is cnperf's built-in fixed-response server, the
// reference server of the constant-rate experiment: every HTTP/1.1 request
// gets the same response of an exact total size on the wire (headers padded
// to HeaderSize bytes, the rest body), as the seed-000 study served a 350 B
// (100 B body + 250 B headers) or 4 KB file. It also answers raw TCP:
// every fixed-size request gets a fixed-size reply.
package httpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// HeaderSize is the size of the response headers, status line and blank
// line included, as in the study (350 B = 100 B body + 250 B headers).
const HeaderSize = 250

// MaxResponse bounds a response.
const MaxResponse = 16 << 20

// Response builds the response of exactly size bytes: HeaderSize bytes of
// headers (padded with an X-Pad header) and size-HeaderSize bytes of body.
// close adds "Connection: close" (same total size).
func Response(size int, close bool) ([]byte, error) {
	if size <= HeaderSize || size > MaxResponse {
		return nil, fmt.Errorf("response size %d: use %d to %d bytes (%d of them headers)", size, HeaderSize+1, MaxResponse, HeaderSize)
	}
	body := size - HeaderSize
	h := fmt.Sprintf("HTTP/1.1 200 OK\r\nServer: cnperf\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n", body)
	if close {
		h += "Connection: close\r\n"
	}
	const padHdr = "X-Pad: "
	pad := HeaderSize - len(h) - len(padHdr) - 2 - 2 // "\r\n" after the pad, "\r\n" blank line
	if pad < 0 {
		return nil, fmt.Errorf("response headers do not fit in %d bytes", HeaderSize)
	}
	h += padHdr + strings.Repeat("x", pad) + "\r\n\r\n"
	return append([]byte(h), bytes.Repeat([]byte{'.'}, body)...), nil
}

// Server answers on a listener until Close.
type Server struct {
	ln       net.Listener
	handle   func(io.ReadWriter)
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	fds      map[int]struct{}
	blocking int
	// blockingMax overrides the bound on blocking connections when
	// blockingSet (SetMaxBlocking)
	blockingSet bool
	blockingMax int
	wg          sync.WaitGroup
	closing     bool
}

// ListenHTTP starts the HTTP server on addr (":8080") answering every
// request with a response of size bytes.
func ListenHTTP(addr string, size int) (*Server, error) {
	keep, err := Response(size, false)
	if err != nil {
		return nil, err
	}
	closing, _ := Response(size, true)
	return listen(addr, func(c io.ReadWriter) { serveHTTP(c, keep, closing) })
}

// ListenRaw starts the raw TCP server on addr: every reqSize bytes read
// are answered by respSize bytes.
func ListenRaw(addr string, reqSize, respSize int) (*Server, error) {
	if reqSize <= 0 || respSize <= 0 || reqSize > MaxResponse || respSize > MaxResponse {
		return nil, fmt.Errorf("raw sizes %d/%d: use 1 to %d bytes", reqSize, respSize, MaxResponse)
	}
	resp := bytes.Repeat([]byte{'r'}, respSize)
	return listen(addr, func(c io.ReadWriter) { serveRaw(c, reqSize, resp) })
}

func listen(addr string, h func(io.ReadWriter)) (*Server, error) {
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	s := &Server{ln: ln, handle: h, conns: map[net.Conn]struct{}{}, fds: map[int]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is where the server listens.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve runs until ctx ends, then closes everything.
func (s *Server) Serve(ctx context.Context) {
	<-ctx.Done()
	s.Close()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. EMFILE under a connection storm: keep serving
		}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			c.Close()
			return
		}
		if s.blocking < s.maxBlocking() {
			if fc, err := blockingConn(c); err == nil {
				s.blocking++
				s.fds[fc.fd] = struct{}{}
				s.wg.Add(1)
				s.mu.Unlock()
				go func() {
					defer s.wg.Done()
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					s.handle(fc)
					s.mu.Lock()
					delete(s.fds, fc.fd)
					s.blocking--
					s.mu.Unlock()
					unix.Close(fc.fd)
				}()
				continue
			}
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.handle(c)
			c.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// MaxBlocking bounds how many connections are served by a thread each,
// blocked in read(2) as netperf's and sockperf's servers are, so that a
// round trip does not also pay for waking a goroutine through the
// netpoller. Beyond the bound connections are goroutines on the
// netpoller, which scales to many.
//
// A raw blocking read keeps its P (see fdConn), so the bound is also one
// under GOMAXPROCS: with every P held by a thread blocked in read, the
// netpoller's goroutines and the other blocking threads would wait up to
// rawTimeout for a P. Measured before the bound (in-process, 16 connections
// at 4,000 requests/s, GOMAXPROCS 4): median 33 ms, p99 219 ms; after: tens
// of µs (TestManyConnectionsLowLatency).
const MaxBlocking = 256

func (s *Server) maxBlocking() int {
	if s.blockingSet {
		return s.blockingMax
	}
	return min(MaxBlocking, runtime.GOMAXPROCS(0)-1)
}

// SetMaxBlocking sets how many connections may be served by blocking
// threads; 0 serves them all on the netpoller. A process that also runs
// threads holding Ps (the load engine's workers) lowers it.
func (s *Server) SetMaxBlocking(n int) {
	s.mu.Lock()
	s.blockingSet, s.blockingMax = true, max(0, min(n, MaxBlocking))
	s.mu.Unlock()
}

// fdConn is a blocking socket served by one locked thread, read and
// written with raw system calls: the Go scheduler then does not treat the
// thread as blocked, so sysmon does not hand its P away after 20 µs and the
// thread does not have to win a P back when a request lands (which on a VM
// adds tens of microseconds to some round trips, as it did for tcp_rr). A
// raw call cannot be preempted, so the socket carries receive and send
// timeouts (rawTimeout) that bound how long a garbage collection waits;
// EAGAIN then just means "again", through a function call that is a
// preemption point.
type fdConn struct{ fd int }

// rawTimeout bounds each raw read or write of a blocking connection.
const rawTimeout = 10 * time.Millisecond

// blockingConn takes c's socket out of the netpoller as a blocking fd.
func blockingConn(c net.Conn) (*fdConn, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, errors.New("not a socket")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	nfd := -1
	var derr error
	if err := raw.Control(func(fd uintptr) { nfd, derr = unix.Dup(int(fd)) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	c.Close() // the dup keeps the connection open
	unix.CloseOnExec(nfd)
	if err := unix.SetNonblock(nfd, false); err != nil {
		unix.Close(nfd)
		return nil, err
	}
	tv := unix.NsecToTimeval(int64(rawTimeout))
	for _, opt := range []int{unix.SO_RCVTIMEO, unix.SO_SNDTIMEO} {
		if err := unix.SetsockoptTimeval(nfd, unix.SOL_SOCKET, opt, &tv); err != nil {
			unix.Close(nfd)
			return nil, err
		}
	}
	return &fdConn{fd: nfd}, nil
}

//go:noinline
func rawIO(trap uintptr, fd int, b []byte) (int, unix.Errno) {
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), e
}

func (f *fdConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, e := rawIO(unix.SYS_READ, f.fd, b)
		if e == unix.EINTR || e == unix.EAGAIN {
			continue // a timeout or a signal: the call above is a preemption point
		}
		if e != 0 {
			return 0, e
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *fdConn) Write(b []byte) (int, error) {
	off := 0
	for off < len(b) {
		n, e := rawIO(unix.SYS_WRITE, f.fd, b[off:])
		if e == unix.EINTR || e == unix.EAGAIN {
			continue
		}
		if e != 0 {
			return off, e
		}
		off += n
	}
	return off, nil
}

// Close stops accepting, closes every connection and waits for them.
func (s *Server) Close() {
	s.mu.Lock()
	s.closing = true
	s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	for fd := range s.fds {
		_ = unix.Shutdown(fd, unix.SHUT_RDWR) // wakes its thread, which closes it
	}
	s.mu.Unlock()
	s.wg.Wait()
}

var endOfHeaders = []byte("\r\n\r\n")

// serveHTTP answers pipelined requests in order, one response each, with
// no allocation per request.
func serveHTTP(c io.ReadWriter, keep, closing []byte) {
	buf := make([]byte, 16<<10)
	out := make([]byte, 0, 4*len(keep))
	n := 0
	for {
		m, err := c.Read(buf[n:])
		if m <= 0 || err != nil {
			return
		}
		n += m
		out = out[:0]
		start, last := 0, false
		for !last {
			idx := bytes.Index(buf[start:n], endOfHeaders)
			if idx < 0 {
				break
			}
			if wantsClose(buf[start : start+idx]) {
				out = append(out, closing...)
				last = true
			} else {
				out = append(out, keep...)
			}
			start += idx + len(endOfHeaders)
		}
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
		}
		if last {
			return
		}
		n = copy(buf, buf[start:n])
		if n == len(buf) {
			return // a request header beyond 16 KiB: not ours
		}
	}
}

// wantsClose finds a "Connection: close" request header.
func wantsClose(req []byte) bool {
	const h = "\nconnection:"
	for i := 0; i+len(h) <= len(req); i++ {
		if !eqFold(req[i:i+len(h)], h) {
			continue
		}
		v := req[i+len(h):]
		if e := bytes.IndexByte(v, '\n'); e >= 0 {
			v = v[:e]
		}
		for j := 0; j+5 <= len(v); j++ {
			if eqFold(v[j:j+5], "close") {
				return true
			}
		}
	}
	return false
}

func eqFold(b []byte, s string) bool {
	for i := 0; i < len(s); i++ {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 32
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func serveRaw(c io.ReadWriter, reqSize int, resp []byte) {
	buf := make([]byte, max(reqSize, 16<<10))
	pending := 0 // bytes of the current request read so far
	out := make([]byte, 0, 4*len(resp))
	for {
		m, err := c.Read(buf)
		if m <= 0 || err != nil {
			return
		}
		pending += m
		out = out[:0]
		for pending >= reqSize {
			pending -= reqSize
			out = append(out, resp...)
		}
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	}
}
