package measure

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/backend/backendtest"
	"github.com/cnperf/cnperf/internal/workload"
	_ "github.com/cnperf/cnperf/internal/workload/rr" // tcp_rr
)

// Issue 34 finding 8: a cell whose server went away with its container
// (dockerd killed) failed with the client's "server closed the
// connection" alone. The servers' health is asked when the client fails,
// and the cause it names leads the cell's error.
func TestClientErrorNamesServerCause(t *testing.T) {
	d, err := (&backendtest.Backend{}).Deploy(context.Background(), backend.Topology{Network: backendtest.Networks[0], Hosts: 1,
		Pods: []backend.PodSpec{{Name: "c1", Host: 1, CPU: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Teardown()
	// the server: an agent of its own, which the test stops mid-cell, and
	// whose health then says why
	sock := "unix:" + filepath.Join(t.TempDir(), "s1.sock")
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); _ = agent.Serve(sctx, sock, 0) }()
	defer func() { stop(); <-served }()
	sc, err := agent.NewClient(sock)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if _, err := sc.Wait(wctx); err != nil {
		t.Fatal(err)
	}
	sc.Health = func(context.Context) error {
		if sctx.Err() != nil {
			return agent.Cause(agent.ErrExited, "its container s1 has exited (exit code 137: killed (SIGKILL))")
		}
		return nil
	}
	dep := &withServer{Deployment: d, server: &backend.Pod{Name: "s1", Host: 1, IP: d.Pod("c1").IP, Agent: sc}}
	w, err := workload.Get("tcp_rr")
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(500*time.Millisecond, stop)
	res := Measure(context.Background(), dep, Spec{Workload: w, Client: "c1", Servers: []string{"s1"},
		Params: workload.Params{Port: freePort(t), MessageSize: 16, Duration: 3 * time.Second}})
	if res.Error == "" {
		t.Fatal("the cell passed with its server stopped")
	}
	if !strings.HasPrefix(res.Error, "server on s1: its container s1 has exited") {
		t.Errorf("cell error %q, want it to lead with the server's cause", res.Error)
	}
	if !errors.Is(sc.Check(), agent.ErrExited) {
		t.Error("the health the test gave is not what Check reports")
	}
}

// withServer is a deployment with one more pod, the server.
type withServer struct {
	backend.Deployment
	server *backend.Pod
}

func (d *withServer) Pod(name string) *backend.Pod {
	if name == d.server.Name {
		return d.server
	}
	return d.Deployment.Pod(name)
}

func (d *withServer) Dial(_ context.Context, _, to, _ string, port int) (netip.AddrPort, error) {
	return netip.AddrPortFrom(d.server.IP, uint16(port)), nil
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
