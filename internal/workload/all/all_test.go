package all_test

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

// TestLoopback runs both halves of every workload in-process over loopback
// (no root needed) and checks the combined metrics make sense.
func TestLoopback(t *testing.T) {
	cases := []struct {
		name, dir string
		size      int
	}{
		{"tcp_rr", "", 16},
		{"udp_rr", "", 64},
		{"tcp_crr", "", 16},
		{"tcp_stream", "up", 1024},
		{"tcp_stream", "down", 1024},
		{"udp_stream", "up", 512},
		{"udp_stream", "down", 512},
	}
	for _, c := range cases {
		t.Run(c.name+"-"+c.dir, func(t *testing.T) {
			w, err := workload.Get(c.name)
			if err != nil {
				t.Fatal(err)
			}
			p := workload.Params{Duration: 300 * time.Millisecond, MessageSize: c.size, Direction: c.dir, Port: freePort(t, w.Proto())}
			w.Defaults(&p)
			if err := w.Validate(p); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			ready := make(chan struct{})
			var srep workload.Report
			var serr error
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				srep, serr = w.Serve(ctx, p, func() { close(ready) })
			}()
			<-ready
			crep, cerr := w.Run(context.Background(), p, netip.MustParseAddrPort("127.0.0.1:"+strconv.Itoa(p.Port)))
			time.Sleep(20 * time.Millisecond)
			cancel()
			wg.Wait()
			if cerr != nil || serr != nil {
				t.Fatalf("client %v, server %v", cerr, serr)
			}
			m, _, err := w.Metrics(p, crep, srep)
			if err != nil {
				t.Fatal(err)
			}
			if m.ThroughputBps == nil && m.TransactionsPerS == nil {
				t.Fatalf("no figures: %+v", m)
			}
			if m.ThroughputBps != nil && *m.ThroughputBps < 1e6 {
				t.Errorf("throughput %.0f bit/s, implausibly low", *m.ThroughputBps)
			}
			if m.TransactionsPerS != nil && *m.TransactionsPerS < 100 {
				t.Errorf("%.0f trans/s, implausibly low", *m.TransactionsPerS)
			}
			if c.name == "tcp_stream" && m.LossRatio != nil {
				t.Error("tcp_stream reports a loss ratio; it must be absent")
			}
			if c.name == "udp_stream" && m.LossRatio == nil {
				t.Error("udp_stream has no loss ratio")
			}
			if m.LatencyUs != nil && (m.LatencyUs["p50"] > m.LatencyUs["p99"] || m.LatencyUs["p99"] > m.LatencyUs["max"]) {
				t.Errorf("percentiles out of order: %v", m.LatencyUs)
			}
		})
	}
}

// freePort is a port the kernel just handed out on every address, so that
// tests running at the same time (other packages, another go test) do not
// share a fixed one.
func freePort(t *testing.T, proto string) int {
	t.Helper()
	if proto == "udp" {
		pc, err := net.ListenPacket("udp4", ":0")
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		return pc.LocalAddr().(*net.UDPAddr).Port
	}
	ln, err := net.Listen("tcp4", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		p    workload.Params
		ok   bool
	}{
		{"tcp_rr", workload.Params{Duration: time.Second, MessageSize: 16}, true},
		{"tcp_rr", workload.Params{Duration: time.Second, MessageSize: 0}, false},
		{"tcp_rr", workload.Params{Duration: -1, MessageSize: 16}, false},
		{"tcp_rr", workload.Params{Duration: time.Second, MessageSize: 16, Direction: "down"}, false},
		{"udp_rr", workload.Params{Duration: time.Second, MessageSize: 4}, false},
		{"udp_stream", workload.Params{Duration: time.Second, MessageSize: 70000}, false},
		{"tcp_stream", workload.Params{Duration: time.Second, MessageSize: 256, Direction: "sideways"}, false},
		{"tcp_stream", workload.Params{Duration: time.Second, MessageSize: 256, Direction: "down"}, true},
	}
	for _, c := range cases {
		w, _ := workload.Get(c.name)
		err := w.Validate(c.p)
		if (err == nil) != c.ok {
			t.Errorf("%s %+v: err=%v, want ok=%v", c.name, c.p, err, c.ok)
		}
	}
}

func TestUnknownWorkload(t *testing.T) {
	if _, err := workload.Get("tcp_nope"); err == nil {
		t.Fatal("want an error for an unknown workload")
	}
}
