package nginx

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/testutil"
)

func TestProxyConfig(t *testing.T) {
	c := ProxyConfig(ProxyOptions{Dir: "/run/cnperf/x/lb", Port: 8080, Upstreams: []string{"10.253.1.2:8001", "10.253.2.2:8002"}})
	for _, want := range []string{"worker_processes 1;", "listen 8080 reuseport", "server 10.253.1.2:8001 max_fails=0;",
		"server 10.253.2.2:8002 max_fails=0;", "proxy_next_upstream off;", "access_log /run/cnperf/x/lb/access.log blocking;",
		"$upstream_connect_time $upstream_header_time", "daemon off;", "random;"} {
		if !strings.Contains(c, want) {
			t.Errorf("config lacks %q:\n%s", want, c)
		}
	}
	if strings.Contains(c, "keepalive 32") || strings.Contains(c, "proxy_http_version 1.1") {
		t.Error("upstream connections must not be kept alive: the blocking time includes the connect")
	}
}

func TestParseProxyLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ProxyLine
		err  bool
	}{
		{"10.253.1.2:8001 200 0.000 0.001 0.001 0.002 200", ProxyLine{"10.253.1.2:8001", 200, 0, 1000, 1000, 2000, 200}, false},
		{"10.253.2.2:8002 502 - - 0.003 0.003 502", ProxyLine{"10.253.2.2:8002", 502, -1, -1, 3000, 3000, 502}, false},
		{"10.253.2.2:8002 - - - - 0.000 502", ProxyLine{"10.253.2.2:8002", 0, -1, -1, -1, 0, 502}, false},
		{"10.253.1.2:8001 200 1.250 1.5 2 2.000 200", ProxyLine{"10.253.1.2:8001", 200, 1250000, 1500000, 2000000, 2000000, 200}, false},
		{"a, b 200 0.000 0.001 0.001 0.002 200", ProxyLine{}, true}, // a retry: two upstreams
		{"10.253.1.2:8001 200 x 0.001 0.001 0.002 200", ProxyLine{}, true},
		{"10.253.1.2:8001 200 -0.1 0.001 0.001 0.002 200", ProxyLine{}, true},
		{"", ProxyLine{}, true},
	} {
		got, err := ParseProxyLine(c.in)
		if (err != nil) != c.err {
			t.Errorf("ParseProxyLine(%q) error %v, want error %v", c.in, err, c.err)
			continue
		}
		if err == nil && got != c.want {
			t.Errorf("ParseProxyLine(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestReadProxyLog(t *testing.T) {
	p := filepath.Join(t.TempDir(), "access.log")
	text := "a:1 200 0.000 0.001 0.001 0.001 200\nbroken\nb:2 200 0.001 0.002 0.002 0.002 200\nc:3 200 0.0"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, bad, next, err := ReadProxyLog(p, 0)
	if err != nil || len(lines) != 2 || bad != 1 || lines[1].Upstream != "b:2" {
		t.Fatalf("ReadProxyLog = %+v, bad %d, err %v; want 2 lines and 1 bad", lines, bad, err)
	}
	if want := int64(strings.LastIndex(text, "\n") + 1); next != want {
		t.Errorf("next offset %d, want %d (the unfinished line waits)", next, want)
	}
	more, _, _, _ := ReadProxyLog(p, next)
	if len(more) != 0 {
		t.Errorf("read %d lines from the unfinished tail", len(more))
	}
}

// A real nginx balances requests at random over two backends and logs,
// for each, the backend and its times.
func TestProxyServes(t *testing.T) {
	testutil.NeedRoot(t, "nginx runs as root (user root in its config)")
	if _, err := Binary(); err != nil {
		t.Skip(err)
	}
	var ups []string
	for i := 0; i < 2; i++ {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
		defer s.Close()
		ups = append(ups, strings.TrimPrefix(s.URL, "http://"))
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	argv, err := WriteProxy(ProxyOptions{Dir: dir, Port: port, Upstreams: ups})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx proxy did not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i := 0; i < 39; i++ {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	var lines []ProxyLine
	for time.Now().Before(deadline) {
		lines, _, _, err = ReadProxyLog(filepath.Join(dir, AccessLog), 0)
		if err == nil && len(lines) >= 40 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(lines) != 40 {
		t.Fatalf("%d log lines, want 40", len(lines))
	}
	per := map[string]int{}
	for _, l := range lines {
		per[l.Upstream]++
		if l.UpstreamStatus != 200 || l.ConnectUs < 0 || l.HeaderUs < l.ConnectUs {
			t.Errorf("log line %+v: want status 200 and 0 <= connect <= header", l)
		}
	}
	// at random, 40 requests: each backend gets 20 ± 3 (below 5 has odds of 1e-7)
	if per[ups[0]] < 5 || per[ups[1]] < 5 || per[ups[0]]+per[ups[1]] != 40 {
		t.Errorf("requests per backend %v, want both served", per)
	}
}
