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
	"net"
	"strings"
	"sync"
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
	ln      net.Listener
	handle  func(net.Conn)
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
	closing bool
}

// ListenHTTP starts the HTTP server on addr (":8080") answering every
// request with a response of size bytes.
func ListenHTTP(addr string, size int) (*Server, error) {
	keep, err := Response(size, false)
	if err != nil {
		return nil, err
	}
	closing, _ := Response(size, true)
	return listen(addr, func(c net.Conn) { serveHTTP(c, keep, closing) })
}

// ListenRaw starts the raw TCP server on addr: every reqSize bytes read
// are answered by respSize bytes.
func ListenRaw(addr string, reqSize, respSize int) (*Server, error) {
	if reqSize <= 0 || respSize <= 0 || reqSize > MaxResponse || respSize > MaxResponse {
		return nil, fmt.Errorf("raw sizes %d/%d: use 1 to %d bytes", reqSize, respSize, MaxResponse)
	}
	resp := bytes.Repeat([]byte{'r'}, respSize)
	return listen(addr, func(c net.Conn) { serveRaw(c, reqSize, resp) })
}

func listen(addr string, h func(net.Conn)) (*Server, error) {
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	s := &Server{ln: ln, handle: h, conns: map[net.Conn]struct{}{}}
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

// Close stops accepting, closes every connection and waits for them.
func (s *Server) Close() {
	s.mu.Lock()
	s.closing = true
	s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

var endOfHeaders = []byte("\r\n\r\n")

// serveHTTP answers pipelined requests in order, one response each, with
// no allocation per request.
func serveHTTP(c net.Conn, keep, closing []byte) {
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

func serveRaw(c net.Conn, reqSize int, resp []byte) {
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
