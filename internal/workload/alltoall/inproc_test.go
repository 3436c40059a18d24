package alltoall

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/workload"
)

func TestFDLimits(t *testing.T) {
	for _, c := range []struct {
		limit uint64
		pods  int
	}{
		{1024, 27},      // 27·26 + 27 + 256 = 985; 28 needs 1040
		{20000, 140},    // this machine's default hard limit
		{1 << 20, 1023}, // the kernel's fs.nr_open default: 1,000 pods fit
	} {
		if got := MaxPodsFor(c.limit); got != c.pods {
			t.Errorf("MaxPodsFor(%d) = %d, want %d", c.limit, got, c.pods)
		}
		if FDsFor(c.pods) > c.limit || FDsFor(c.pods+1) <= c.limit {
			t.Errorf("limit %d: %d pods need %d, %d need %d", c.limit, c.pods, FDsFor(c.pods), c.pods+1, FDsFor(c.pods+1))
		}
	}
	for _, c := range []struct {
		n    int
		hard uint64
		ok   bool
	}{{140, 20000, true}, {141, 20000, false}, {1000, 1 << 20, true}, {1000, 1_000_000, false}} {
		if err := fitFDs(c.n, c.hard); (err == nil) != c.ok || err != nil && !errors.Is(err, ErrTooFewFDs) {
			t.Errorf("%d pods, hard limit %d: %v", c.n, c.hard, err)
		}
	}
	if FDsFor(1000) != 1000*999+1000+256 {
		t.Errorf("FDsFor(1000) = %d", FDsFor(1000))
	}
}

// TestRaiseFDLimitRefuses: an exchange above the hard limit fails before
// it opens anything, naming the limit and the largest N that fits.
func TestRaiseFDLimitRefuses(t *testing.T) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Max >= FDsFor(100000) {
		t.Skipf("hard limit %d holds 100,000 pods", lim.Max)
	}
	err := RaiseFDLimit(100000)
	if !errors.Is(err, ErrTooFewFDs) {
		t.Fatalf("err = %v, want ErrTooFewFDs", err)
	}
	for _, want := range []string{"100000 pods", "hard limit is " + strconv.FormatUint(lim.Max, 10), "at most " + strconv.Itoa(MaxPodsFor(lim.Max)) + " pods"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

// TestExchangeLoopback runs the in-process exchange among N ranks sharing
// this process's namespace: Metrics accepts its report (every rank ran
// the same rounds and sent and received exactly rounds·(N-1) messages).
func TestExchangeLoopback(t *testing.T) {
	for _, c := range []struct{ n, loops, size int }{{2, 1, 1024}, {7, 2, 1024}, {16, 3, 100000}} {
		t.Run(strconv.Itoa(c.n), func(t *testing.T) {
			x := Exchange{NetNS: make([]string, c.n), MessageSize: c.size, Duration: 200 * time.Millisecond, Loops: c.loops,
				Dial: func(_, _, port int) (netip.AddrPort, error) {
					return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)), nil
				}}
			rep, err := x.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			p := workload.Params{MessageSize: c.size, Extra: map[string]string{ExtraPods: strconv.Itoa(c.n)}}
			m, _, err := AllToAll{}.Metrics(p, rep, workload.Report{})
			if err != nil {
				t.Fatal(err)
			}
			rounds := *m.Transactions
			if rounds < 3 || *m.Messages != rounds*int64(c.n*(c.n-1)) || *m.Bytes != *m.Messages*int64(c.size) {
				t.Errorf("%d rounds, %d messages, %d bytes", rounds, *m.Messages, *m.Bytes)
			}
			if m.LatencyUs["p50"] <= 0 || *m.DurationS < 0.2 {
				t.Errorf("p50 %v us over %v s", m.LatencyUs["p50"], *m.DurationS)
			}
		})
	}
}

// TestExchangeCancelled: a cancelled exchange returns promptly.
func TestExchangeCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	x := Exchange{NetNS: make([]string, 4), MessageSize: 1024, Duration: time.Hour,
		Dial: func(_, _, port int) (netip.AddrPort, error) {
			return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)), nil
		}}
	t0 := time.Now()
	if _, err := x.Run(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("returned after %v", d)
	}
}
