package kubernetes

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/client-go/rest"

	"github.com/cnperf/cnperf/internal/agent"
)

// portForwardServer is an API server's pods/portforward as far as the
// protocol goes (SPDY; WebSocket refused, so the client falls back): each
// pair of streams of one request id is connected to 127.0.0.1:port on this
// machine, the "pod"; a refused connection is reported on the error stream.
type portForwardServer struct {
	mu    sync.Mutex
	paths []string
}

func (s *portForwardServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths = append(s.paths, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		http.Error(w, "no websocket here", http.StatusBadRequest)
		return
	}
	if _, err := httpstream.Handshake(r, w, []string{"portforward.k8s.io"}); err != nil {
		return
	}
	type pair struct{ errS, data httpstream.Stream }
	var mu sync.Mutex
	pending := map[string]*pair{}
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(st httpstream.Stream, _ <-chan struct{}) error {
		id := st.Headers().Get(corev1.PortForwardRequestIDHeader)
		mu.Lock()
		p := pending[id]
		if p == nil {
			p = &pair{}
			pending[id] = p
		}
		if st.Headers().Get(corev1.StreamType) == corev1.StreamTypeError {
			p.errS = st
		} else {
			p.data = st
		}
		done := p.errS != nil && p.data != nil
		if done {
			delete(pending, id)
		}
		mu.Unlock()
		if done {
			go forwardPair(p.errS, p.data)
		}
		return nil
	})
	if conn == nil {
		return
	}
	<-conn.CloseChan()
}

func forwardPair(errS, data httpstream.Stream) {
	defer errS.Close()
	defer data.Close()
	port := data.Headers().Get(corev1.PortHeader)
	c, err := net.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintf(errS, "error forwarding port %s to pod: %v", port, err)
		return
	}
	defer c.Close()
	go func() { _, _ = io.Copy(c, data) }()
	_, _ = io.Copy(data, c)
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestForward: connections reach the pod's port through the API server;
// a refused one fails alone, and once the port listens the next gets
// through on the same tunnel (an agent is waited for by retrying).
func TestForward(t *testing.T) {
	pf := &portForwardServer{}
	srv := httptest.NewServer(pf)
	defer srv.Close()
	cl, err := ClientsFor(&rest.Config{Host: srv.URL}, "")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	tun, err := cl.Forward.Forward(context.Background(), "cnperf-t1", "c1", port)
	if err != nil {
		t.Fatal(err)
	}
	defer tun.Close()

	// nothing listens in the "pod" yet
	c, err := net.Dial("tcp", tun.Addr())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err == nil {
		t.Errorf("read %d bytes from a port nobody listens on", n)
	}
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for tun.LastError() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if e := tun.LastError(); e == nil || !strings.Contains(e.Error(), "connection refused") {
		t.Errorf("last error %v, want the refusal", e)
	}

	// an agent starts there: the same tunnel reaches it
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = agent.Serve(ctx, "tcp:127.0.0.1:"+strconv.Itoa(port), 0) }()
	ac := &agent.Client{Network: "tcp", Addr: tun.Addr()}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if _, err := ac.Wait(wctx); err != nil {
		t.Fatalf("agent through the tunnel: %v (last error %v)", err, tun.LastError())
	}
	// many connections at once, each its own pair of streams
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ac.Stats(wctx); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("%v (the tunnel's last error: %v)", err, tun.LastError())
	}
	pf.mu.Lock()
	paths := strings.Join(pf.paths, "\n")
	pf.mu.Unlock()
	// one SPDY connection carried all of it, the refused one included
	if n := strings.Count(paths, "POST /api/v1/namespaces/cnperf-t1/pods/c1/portforward"); n != 1 {
		t.Errorf("%d SPDY connections, want 1; requests:\n%s", n, paths)
	}

	// a line echoed through raw bytes both ways
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	echo, err := cl.Forward.Forward(context.Background(), "cnperf-t1", "s1", ln.Addr().(*net.TCPAddr).Port)
	if err != nil {
		t.Fatal(err)
	}
	c, err = net.Dial("tcp", echo.Addr())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	msg := strings.Repeat("x", 100000) + "\n"
	go func() { _, _ = io.WriteString(c, msg) }()
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || got != msg {
		t.Errorf("echo: %d bytes, %v", len(got), err)
	}
	c.Close()
	echo.Close()
	if _, err := net.Dial("tcp", echo.Addr()); err == nil {
		t.Error("the tunnel still listens after Close")
	}
}
