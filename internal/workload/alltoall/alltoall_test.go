package alltoall

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
)

func freePorts(t *testing.T, n int) int {
	t.Helper()
	for try := 0; try < 50; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		ok := base+n < 65000
		for i := 0; ok && i < n; i++ {
			l, err := net.Listen("tcp", ":"+strconv.Itoa(base+i))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

// TestLoopback runs N ranks on loopback in one process: every rank ran the
// same rounds, and received and sent exactly rounds·(N-1) messages.
func TestLoopback(t *testing.T) {
	for _, n := range []int{2, 5} {
		port := freePorts(t, n)
		addrs := make([]string, n)
		for i := range addrs {
			addrs[i] = "127.0.0.1:" + strconv.Itoa(port+i)
		}
		reps := make([]workload.Report, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			p := workload.Params{Duration: 200 * time.Millisecond, MessageSize: 1024, Port: port + i,
				Extra: map[string]string{RankKey: strconv.Itoa(i), PeersKey: strings.Join(addrs, ",")}}
			wg.Add(1)
			go func() {
				defer wg.Done()
				reps[i], errs[i] = AllToAll{}.Run(context.Background(), p, netip.AddrPort{})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("n=%d rank %d: %v", n, i, err)
			}
		}
		rounds := reps[0].Transactions
		var merged workload.Report
		for i, r := range reps {
			if r.Transactions != rounds || r.Messages != rounds*int64(n-1) || r.Extra[ExtraSent] != float64(rounds*int64(n-1)) {
				t.Errorf("n=%d rank %d: %d rounds, %d received, %v sent; rank 0 ran %d rounds", n, i, r.Transactions, r.Messages, r.Extra[ExtraSent], rounds)
			}
			merged.Transactions += r.Transactions
			merged.Messages += r.Messages
			merged.Bytes += r.Bytes
			merged.Seconds = max(merged.Seconds, r.Seconds)
			merged.Extra = map[string]float64{ExtraSent: merged.Extra[ExtraSent] + r.Extra[ExtraSent]}
			merged.Histogram = r.Histogram
		}
		if rounds < 2 {
			t.Fatalf("n=%d: %d rounds", n, rounds)
		}
		m, _, err := AllToAll{}.Metrics(workload.Params{Extra: map[string]string{ExtraPods: strconv.Itoa(n)}}, merged, workload.Report{})
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if m.Extra[ExtraExpected] != float64(rounds*int64(n*(n-1))) || *m.ThroughputBps <= 0 || m.LatencyUs["p50"] <= 0 {
			t.Errorf("n=%d: metrics %+v", n, m)
		}
		// one message missing is an error, not a figure
		merged.Messages--
		if _, _, err := (AllToAll{}).Metrics(workload.Params{Extra: map[string]string{ExtraPods: strconv.Itoa(n)}}, merged, workload.Report{}); err == nil {
			t.Errorf("n=%d: a lost message went unnoticed", n)
		}
	}
}
