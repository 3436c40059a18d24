package httpserver

import (
	"bytes"
	"github.com/cnperf/cnperf/internal/racedet"
	"io"
	"net"
	"slices"
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

// Many connections, one request at a time each: a request on a connection
// whose thread has no P (every P held by a thread blocked in a raw read of
// an idle connection) would wait for a 10 ms read timeout elsewhere. The
// bound on blocking connections keeps round trips at loopback speed.
func TestManyConnectionsLowLatency(t *testing.T) {
	if racedet.On {
		t.Skip("timing assertions: run without -race (scripts/test.sh does)")
	}
	s, err := ListenRaw("127.0.0.1:0", 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 32
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp4", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	time.Sleep(50 * time.Millisecond) // every connection accepted and waiting in read
	req, resp := make([]byte, 16), make([]byte, 16)
	var rtts []time.Duration
	for round := 0; round < 5; round++ {
		for _, c := range conns {
			t0 := time.Now()
			_ = c.SetDeadline(t0.Add(2 * time.Second))
			if _, err := c.Write(req); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c, resp); err != nil {
				t.Fatal(err)
			}
			rtts = append(rtts, time.Since(t0))
		}
	}
	slices.Sort(rtts)
	med := rtts[len(rtts)/2]
	t.Logf("%d round trips over %d connections: median %v, max %v", len(rtts), n, med, rtts[len(rtts)-1])
	if med > 2*time.Millisecond {
		t.Errorf("median round trip %v over %d connections; threads are waiting for a P", med, n)
	}
}
