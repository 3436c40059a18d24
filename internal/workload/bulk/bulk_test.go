package bulk

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
)

func TestParseAmount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"1GiB", 1 << 30}, {"100MiB", 100 << 20}, {"64KiB", 64 << 10}, {"12345", 12345},
		{"0", 0}, {"-1MiB", 0}, {"1GB", 0}, {"65GiB", 0}, {"", 0},
	} {
		got, err := ParseAmount(tc.in)
		if (tc.want == 0) != (err != nil) || got != tc.want {
			t.Errorf("%q: %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestSteps(t *testing.T) {
	var done []workload.StepResult
	var labels []string
	for {
		p, label, ok := TCP{}.Next(workload.Params{}, done)
		if !ok {
			break
		}
		labels = append(labels, label)
		done = append(done, workload.StepResult{Params: p})
	}
	if len(labels) != 2 || labels[0] != "direction=up" || labels[1] != "direction=down" {
		t.Errorf("steps %v", labels)
	}
	if _, label, _ := (TCP{}).Next(workload.Params{Direction: "down"}, nil); label != "direction=down" {
		t.Errorf("--direction down: first step %q", label)
	}
}

// TestLoopback moves exactly the amount each way on loopback.
func TestLoopback(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	for _, d := range []string{"up", "down"} {
		p := workload.Params{Duration: 10 * time.Second, MessageSize: 4096, Direction: d, Port: port, Extra: map[string]string{"amount": "3MiB"}}
		ctx, cancel := context.WithCancel(context.Background())
		ready := make(chan struct{})
		srv := make(chan workload.Report, 1)
		go func() {
			r, _ := TCP{}.Serve(ctx, p, func() { close(ready) })
			srv <- r
		}()
		<-ready
		c, err := TCP{}.Run(context.Background(), p, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)))
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		time.Sleep(50 * time.Millisecond)
		cancel()
		s := <-srv
		m, _, err := TCP{}.Metrics(p, c, s)
		if err != nil || *m.Bytes != 3<<20 || *m.DurationS <= 0 {
			t.Errorf("%s: %+v, %v", d, m, err)
		}
		port++
	}
}
