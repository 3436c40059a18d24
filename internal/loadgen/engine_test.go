package loadgen

import (
	"context"
	"github.com/cnperf/cnperf/internal/racedet"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/httpserver"
)

func startHTTP(t testing.TB, size int) netip.AddrPort {
	t.Helper()
	s, err := httpserver.ListenHTTP("127.0.0.1:0", size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	// the engine's workers hold their Ps while they wait; in the same
	// process a server thread blocked in read must not hold one too
	s.SetMaxBlocking(0)
	return netip.MustParseAddrPort(s.Addr().String())
}

func httpConfig(addr netip.AddrPort) Config {
	return Config{Addr: addr, Protocol: HTTP, Request: HTTPRequest(addr.String(), "/", false), KeepAlive: true}
}

func TestOpenLoopHTTP(t *testing.T) {
	if racedet.On {
		t.Skip("timing assertions: run without -race (scripts/test.sh does)")
	}
	for _, size := range []int{350, 4096} {
		addr := startHTTP(t, size)
		c := httpConfig(addr)
		c.Rate, c.Duration, c.Connections, c.Threads = 4000, 500*time.Millisecond, 16, 2
		r, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if r.Scheduled != 2000 || r.Completed != r.Scheduled || r.Errors != 0 {
			t.Fatalf("size %d: scheduled %d completed %d errors %d unsent %d timeouts %d", size, r.Scheduled, r.Completed, r.Errors, r.Unsent, r.Timeouts)
		}
		if r.Latency.Count() != r.Completed || r.Uncorrected.Count() != r.Completed || r.SendLag.Count() != r.Scheduled {
			t.Fatalf("histogram counts %d/%d/%d, want %d", r.Latency.Count(), r.Uncorrected.Count(), r.SendLag.Count(), r.Completed)
		}
		// on loopback at 4,000/s a median of milliseconds means threads
		// waited for a P or a timeout, not for the network
		if p := r.Latency.Quantile(50); p > 5*time.Millisecond {
			t.Errorf("size %d: median %v on loopback", size, p)
		}
		if r.Latency.Quantile(50) < r.Uncorrected.Quantile(50) {
			t.Errorf("corrected median %v below uncorrected %v", r.Latency.Quantile(50), r.Uncorrected.Quantile(50))
		}
		t.Logf("size %d: p50 %v p99 %v lag p99 %v", size, r.Latency.Quantile(50), r.Latency.Quantile(99), r.SendLag.Quantile(99))
	}
}

// The pacing probe runs the schedule with no I/O: every request is
// counted, answered as sent, and no connection is ever short.
func TestPaceProbe(t *testing.T) {
	c := Config{Pace: true, Rate: 50000, Duration: 200 * time.Millisecond, Connections: 4, Threads: 2}
	r, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Scheduled != 10000 || r.Completed != 10000 || r.SendLag.Count() != 10000 || r.Latency.Count() != 10000 {
		t.Fatalf("scheduled %d completed %d lag samples %d latency samples %d, want 10000 each", r.Scheduled, r.Completed, r.SendLag.Count(), r.Latency.Count())
	}
	if r.ConnsBusy != 0 || r.Errors != 0 || r.Connects != 0 {
		t.Errorf("busy %v errors %d connects %d; a probe has no connections to wait for", r.ConnsBusy, r.Errors, r.Connects)
	}
	// answered as sent: the corrected latency is the send lag
	if a, b := r.Latency.Quantile(99), r.SendLag.Quantile(99); a < b || a > b+b/10+time.Microsecond {
		t.Errorf("latency p99 %v, send lag p99 %v: should be the same", a, b)
	}
	if _, err := Run(context.Background(), Config{Pace: true, Duration: time.Second}); err == nil {
		t.Error("a probe without a rate ran")
	}
	t.Logf("pace 50000/s on 2 threads: send lag p50 %v p99 %v p99.9 %v max %v", r.SendLag.Quantile(50), r.SendLag.Quantile(99), r.SendLag.Quantile(99.9), r.SendLag.Max())
}

func TestClosedLoopHTTP(t *testing.T) {
	if racedet.On {
		t.Skip("timing assertions: run without -race (scripts/test.sh does)")
	}
	addr := startHTTP(t, 350)
	for _, keep := range []bool{true, false} {
		c := httpConfig(addr)
		c.Request = HTTPRequest(addr.String(), "/", !keep)
		c.KeepAlive = keep
		c.Duration, c.Connections, c.Threads = 300*time.Millisecond, 4, 2
		r, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if r.Completed < 100 || r.Errors != 0 || r.Latency.Count() != r.Completed {
			t.Fatalf("keepalive=%v: completed %d errors %d samples %d", keep, r.Completed, r.Errors, r.Latency.Count())
		}
		if !keep && r.Connects < r.Completed {
			t.Errorf("short connections: %d connects for %d requests", r.Connects, r.Completed)
		}
		if keep && r.Connects != 4 {
			t.Errorf("keep-alive: %d connects, want 4", r.Connects)
		}
		t.Logf("keepalive=%v: %.0f req/s", keep, r.Achieved())
	}
}

// stallServer answers raw 16-byte requests with 16 bytes, but every
// response is held while the server is stalled.
type stallServer struct {
	ln    net.Listener
	mu    sync.RWMutex // held for writing during a stall
	first atomic.Bool
	seen  chan struct{}
}

func newStallServer(t *testing.T) *stallServer {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stallServer{ln: ln, seen: make(chan struct{})}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 16)
				for {
					if _, err := io_ReadFull(c, b); err != nil {
						return
					}
					if s.first.CompareAndSwap(false, true) {
						close(s.seen)
					}
					s.mu.RLock()
					s.mu.RUnlock()
					if _, err := c.Write(b); err != nil {
						return
					}
				}
			}()
		}
	}()
	return s
}

func io_ReadFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		if err != nil {
			return n, err
		}
		n += m
	}
	return n, nil
}

// A server that stalls for 100 ms in a 1 s constant-rate run must show the
// stall in the corrected tail, with every scheduled request measured; the
// uncorrected latency (what a closed-loop tool reports) hides most of it.
func TestCoordinatedOmissionCorrected(t *testing.T) {
	if racedet.On {
		t.Skip("timing assertions: run without -race (scripts/test.sh does)")
	}
	s := newStallServer(t)
	addr := netip.MustParseAddrPort(s.ln.Addr().String())
	go func() {
		<-s.seen
		time.Sleep(400 * time.Millisecond)
		s.mu.Lock()
		time.Sleep(100 * time.Millisecond)
		s.mu.Unlock()
	}()
	c := Config{Addr: addr, Protocol: Raw, Request: make([]byte, 16), ResponseSize: 16, KeepAlive: true,
		Rate: 2000, Duration: time.Second, Connections: 8, Threads: 2}
	r, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Scheduled != 2000 || r.Completed != 2000 || r.Latency.Count() != 2000 {
		t.Fatalf("scheduled %d completed %d samples %d: a stall must not lose samples", r.Scheduled, r.Completed, r.Latency.Count())
	}
	// 200 of 2000 requests fell due in the stall: 10% waited up to 100 ms.
	if p := r.Latency.Quantile(99.9); p < 90*time.Millisecond {
		t.Errorf("corrected p99.9 %v; the 100 ms stall is missing", p)
	}
	if p := r.Latency.Quantile(95); p < 40*time.Millisecond {
		t.Errorf("corrected p95 %v; the stall's backlog is missing", p)
	}
	if p := r.Uncorrected.Quantile(95); p > 20*time.Millisecond {
		t.Errorf("uncorrected p95 %v; expected the stall to be hidden there", p)
	}
	// both workers ran out of connections for most of the stall: the lag
	// is put down to the server, not to the client thread
	if r.Workers != 2 || r.ConnsBusy < 2*70*time.Millisecond || r.ConnsBusy > 2*300*time.Millisecond {
		t.Errorf("%d workers, connections busy %v in all; want about 2 x 100 ms", r.Workers, r.ConnsBusy)
	}
	if sat, why := r.Saturated(time.Millisecond); !sat {
		t.Errorf("a step with a 100 ms send backlog must be saturated")
	} else {
		t.Logf("saturated: %s", why)
	}
	t.Logf("corrected p95 %v p99.9 %v; uncorrected p95 %v p99.9 %v", r.Latency.Quantile(95), r.Latency.Quantile(99.9), r.Uncorrected.Quantile(95), r.Uncorrected.Quantile(99.9))
}

// Worker histograms merge exactly, and so do encoded ones from several agents.
func TestMergeAcrossWorkersAndAgents(t *testing.T) {
	addr := startHTTP(t, 350)
	var agents []*Result
	all := newResult()
	for a := 0; a < 2; a++ {
		c := httpConfig(addr)
		c.Rate, c.Duration, c.Connections, c.Threads = 2000, 300*time.Millisecond, 6, 3
		r, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if r.Latency.Count() != r.Completed {
			t.Fatalf("workers merged %d samples for %d responses", r.Latency.Count(), r.Completed)
		}
		agents = append(agents, r)
		all.Merge(r)
	}
	// across agents: through the wire encoding
	merged := hist.New()
	for _, r := range agents {
		enc, err := r.Latency.Encode()
		if err != nil {
			t.Fatal(err)
		}
		h, err := hist.Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		merged.Merge(h)
	}
	if merged.Count() != all.Latency.Count() {
		t.Fatalf("merged %d, want %d", merged.Count(), all.Latency.Count())
	}
	for _, q := range []float64{50, 99, 99.9, 99.999, 100} {
		if merged.Quantile(q) != all.Latency.Quantile(q) {
			t.Errorf("p%v: %v via encoding, %v direct", q, merged.Quantile(q), all.Latency.Quantile(q))
		}
	}
}

// The hot path allocates nothing: a run's allocations do not grow with its
// request count.
func TestNoAllocationPerRequest(t *testing.T) {
	if racedet.On {
		t.Skip("timing assertions: run without -race (scripts/test.sh does)")
	}
	addr := startHTTP(t, 350)
	run := func(d time.Duration) (uint64, int64) {
		c := httpConfig(addr)
		c.Duration, c.Connections, c.Threads = d, 4, 1
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		r, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		return m1.Mallocs - m0.Mallocs, r.Completed
	}
	a1, n1 := run(100 * time.Millisecond)
	a2, n2 := run(400 * time.Millisecond)
	if n2 <= n1 {
		t.Skipf("too few requests to compare (%d, %d)", n1, n2)
	}
	per := float64(int64(a2)-int64(a1)) / float64(n2-n1)
	t.Logf("%d allocs for %d requests, %d for %d: %.4f per extra request (client and server)", a1, n1, a2, n2, per)
	if per > 0.05 {
		t.Errorf("%.3f allocations per request; the hot path must not allocate", per)
	}
}

func TestBadInput(t *testing.T) {
	addr := startHTTP(t, 350)
	cases := []struct {
		name string
		mod  func(*Config)
	}{
		{"no address", func(c *Config) { c.Addr = netip.AddrPort{} }},
		{"rate too high", func(c *Config) { c.Rate = 1e9 }},
		{"open loop short connections", func(c *Config) { c.Rate = 10; c.KeepAlive = false }},
		{"raw without response size", func(c *Config) { c.Protocol = Raw }},
		{"nothing listening", func(c *Config) { c.Addr = netip.MustParseAddrPort("127.0.0.1:1") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := httpConfig(addr)
			c.Duration = 100 * time.Millisecond
			tc.mod(&c)
			if _, err := Run(context.Background(), c); err == nil {
				t.Fatal("no error")
			} else {
				t.Log(err)
			}
		})
	}
}

// A rate far beyond what one connection can carry is a saturated step, not
// a latency.
func TestUnreachableRateIsSaturated(t *testing.T) {
	if racedet.On {
		t.Skip("timing assertions: run without -race (scripts/test.sh does)")
	}
	s := newStallServer(t)
	addr := netip.MustParseAddrPort(s.ln.Addr().String())
	go func() { // a server that stalls most of the run
		<-s.seen
		s.mu.Lock()
		time.Sleep(250 * time.Millisecond)
		s.mu.Unlock()
	}()
	c := Config{Addr: addr, Protocol: Raw, Request: make([]byte, 16), ResponseSize: 16, KeepAlive: true,
		Rate: 20000, Duration: 300 * time.Millisecond, Connections: 1, Threads: 1, Drain: 100 * time.Millisecond}
	r, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	sat, why := r.Saturated(time.Millisecond)
	if !sat {
		t.Fatalf("not saturated: achieved %.0f of %d", r.Achieved(), r.Target)
	}
	if r.Unsent+r.Timeouts+r.Completed != r.Scheduled {
		t.Errorf("unsent %d + timeouts %d + completed %d != scheduled %d", r.Unsent, r.Timeouts, r.Completed, r.Scheduled)
	}
	t.Log(why)
}

// Workers wait in epoll without releasing their P; a garbage collection
// during a run against a silent server must still complete promptly.
func TestRawWaitDoesNotBlockGC(t *testing.T) {
	if racedet.On {
		t.Skip("timing assertions: run without -race (scripts/test.sh does)")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept and never answer
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	addr := netip.MustParseAddrPort(ln.Addr().String())
	done := make(chan struct{})
	var worst time.Duration
	go func() {
		defer close(done)
		time.Sleep(50 * time.Millisecond)
		for i := 0; i < 20; i++ {
			t0 := time.Now()
			runtime.GC()
			worst = max(worst, time.Since(t0))
			time.Sleep(5 * time.Millisecond)
		}
	}()
	c := Config{Addr: addr, Protocol: Raw, Request: make([]byte, 16), ResponseSize: 16, KeepAlive: true,
		Duration: 400 * time.Millisecond, Connections: 2, Threads: 2}
	if _, err := Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	<-done
	if worst > 200*time.Millisecond {
		t.Fatalf("a GC took %v while workers waited", worst)
	}
	t.Logf("worst GC %v", worst)
}
