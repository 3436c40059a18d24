package httpserver

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestResponseSizes(t *testing.T) {
	for _, size := range []int{251, 350, 4096, 1 << 20} {
		for _, close := range []bool{false, true} {
			r, err := Response(size, close)
			if err != nil {
				t.Fatal(err)
			}
			hdr := bytes.Index(r, []byte("\r\n\r\n")) + 4
			if len(r) != size || hdr != HeaderSize {
				t.Errorf("size %d close %v: %d bytes, headers %d", size, close, len(r), hdr)
			}
			if close != bytes.Contains(r, []byte("Connection: close")) {
				t.Errorf("size %d close %v: Connection header wrong", size, close)
			}
		}
	}
	for _, bad := range []int{0, 250, MaxResponse + 1} {
		if _, err := Response(bad, false); err == nil {
			t.Errorf("size %d accepted", bad)
		}
	}
}

func TestPipelinedAndClose(t *testing.T) {
	s, err := ListenHTTP("127.0.0.1:0", 350)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("tcp4", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	// three pipelined requests, the last asking to close, split mid-header
	all := req + req + strings.Replace(req, "\r\n\r\n", "\r\nConnection: close\r\n\r\n", 1)
	c.Write([]byte(all[:30]))
	time.Sleep(10 * time.Millisecond)
	c.Write([]byte(all[30:]))
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	b, err := io.ReadAll(c) // ends when the server closes
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 3*350 || bytes.Count(b, []byte("HTTP/1.1 200 OK")) != 3 {
		t.Fatalf("%d bytes, %d responses; want 3 of 350 B and a close", len(b), bytes.Count(b, []byte("HTTP/1.1 200 OK")))
	}
}

func TestRaw(t *testing.T) {
	s, err := ListenRaw("127.0.0.1:0", 16, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("tcp4", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(make([]byte, 40)) // two and a half requests
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	b, _ := io.ReadAll(c)
	if len(b) != 200 {
		t.Fatalf("%d bytes for 2.5 requests; want 2 responses of 100", len(b))
	}
}
