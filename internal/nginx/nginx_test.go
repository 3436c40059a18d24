package nginx

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/testutil"
)

func TestConfig(t *testing.T) {
	c := Config(Options{Dir: "/run/cnperf/x/nginx", Port: 5201, Workers: 2, CPUs: []int{1, 3}})
	for _, want := range []string{"worker_processes 2;", "worker_cpu_affinity auto 1010;", "access_log off;",
		"listen 5201 reuseport", "root /run/cnperf/x/nginx/www;", "keepalive_requests 1000000000;", "daemon off;"} {
		if !strings.Contains(c, want) {
			t.Errorf("config lacks %q", want)
		}
	}
}

func TestCPUMask(t *testing.T) {
	for _, c := range []struct {
		cpus []int
		want string
	}{{[]int{0}, "1"}, {[]int{1}, "10"}, {[]int{0, 1}, "11"}, {[]int{2, 5}, "100100"}} {
		if got := cpuMask(c.cpus); got != c.want {
			t.Errorf("cpuMask(%v) = %q, want %q", c.cpus, got, c.want)
		}
	}
	// by default the workers follow the caller's affinity
	if cfg := Config(Options{Dir: "/x", Port: 80}); !strings.Contains(cfg, "worker_cpu_affinity auto "+cpuMask(affinity())+";") {
		t.Errorf("default config does not follow the caller's affinity %v:\n%s", affinity(), cfg)
	}
}

// Start serves the file of the requested size, and Stop leaves no nginx
// process behind.
func TestStartServeStop(t *testing.T) {
	testutil.NeedRoot(t, "nginx runs as root (user root in its config)")
	if _, err := Binary(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	// a port the kernel just handed out and took back: free, unlike one
	// derived from the pid, which another test binary may hold
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s, err := Start(context.Background(), Options{Dir: dir, Port: port, BodySize: 100, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	pgid := s.PID()
	c, err := net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	r := bufio.NewReader(c)
	status, _ := r.ReadString('\n')
	clen := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil || line == "\r\n" {
			break
		}
		fmt.Sscanf(strings.ToLower(line), "content-length: %d", &clen)
	}
	body := make([]byte, max(clen, 0))
	_, _ = io.ReadFull(r, body)
	c.Close()
	s.Stop()
	if !strings.Contains(status, "200") || clen != 100 {
		t.Fatalf("status %q content-length %d", status, clen)
	}
	if err := syscall.Kill(-pgid, 0); err == nil {
		t.Fatalf("nginx process group %d still alive after Stop", pgid)
	}
}

func TestMissingNginx(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	saved := fallback
	fallback = []string{"/nonexistent/nginx"}
	t.Cleanup(func() { fallback = saved })
	_, err := Start(context.Background(), Options{Dir: t.TempDir(), Port: 1, BodySize: 1})
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "apt-get install nginx-light") {
		t.Fatalf("error %v does not say what to do", err)
	}
}
