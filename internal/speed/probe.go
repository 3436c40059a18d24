// Package speed measures how fast this machine's CPUs are at a moment: a
// fixed piece of work timed on each CPU (a thread pinned there), and what
// crosses between two CPUs (a cache line's round trip, a buffer written on
// one and read on the other). On a virtual machine the same bytes can
// cost twice the CPU time from one cell to the next (the host's other
// tenants, SMT siblings, where the host placed the virtual CPUs); the
// probe run just before and just after a cell, outside the measured
// interval, says at which speed the cell ran.
package speed

import (
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/result"
)

// Reps is how many times each piece of work is timed: the fastest rep is
// the CPU's speed while the probe had it (a rep cut by an interrupt or
// the hypervisor is slower, never faster).
const Reps = 3

// Iterations of the spin loop per rep: about 40 µs on a 3 GHz core.
const Iterations = 20000

// sink keeps the compiler from dropping the spin loop.
var sink atomic.Uint64

// spin is the fixed work: a xorshift chain, each step depending on the
// last, so it runs at the core's speed whatever the memory does.
func spin(n int) uint64 {
	x := uint64(88172645463325252)
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// bufSize is the buffer a pair probe passes between two CPUs: beyond L2,
// within a last-level cache, the size of a socket's data in flight.
const bufSize = 256 << 10

var bufs = sync.OnceValue(func() [2][]byte {
	a, b := make([]byte, bufSize), make([]byte, bufSize)
	for i := range a {
		a[i] = byte(i)
	}
	return [2][]byte{a, b}
})

var probing sync.Mutex

// pairBudget bounds a pair probe: both threads spin, so a CPU the
// hypervisor does not run cannot hold the other for longer.
const pairBudget = 10 * time.Millisecond

// Probe times the spin work on each of cpus, then what crosses between
// the first two, from the calling goroutine's thread (at real-time
// priority where it may: it is running now, so the switch costs nothing)
// and a partner thread kept for the purpose. A CPU the thread could not
// move to has CPU -1; a pair whose partner did not answer within its
// budget is left out.
func Probe(cpus []int) *result.SpeedProbe {
	probing.Lock() // one probe at a time: they would time each other
	defer probing.Unlock()
	t0 := time.Now()
	p := pin()
	if p == nil {
		return nil
	}
	out := &result.SpeedProbe{RT: p.rt}
	for _, c := range cpus {
		out.CPUs = append(out.CPUs, probeCPU(p, c))
	}
	if len(cpus) > 1 && runtime.GOMAXPROCS(0) > 1 && p.to(cpus[0]) {
		if ps, ok := thePartner().probe(cpus[0], cpus[1]); ok {
			out.Pairs = append(out.Pairs, ps)
		}
	}
	// the time of the probe itself: what follows is this thread going
	// back to its normal priority, where a loaded machine makes it wait
	// as it would make any other
	out.S = time.Since(t0).Seconds()
	p.release()
	return out
}

func probeCPU(p *pinned, cpu int) result.CPUSpeed {
	out := result.CPUSpeed{CPU: cpu}
	if !p.to(cpu) {
		out.CPU = -1
		return out
	}
	best := math.Inf(1)
	for range Reps {
		t0 := time.Now()
		sink.Add(spin(Iterations))
		best = math.Min(best, float64(time.Since(t0).Nanoseconds()))
	}
	out.SpinNs = best
	return out
}

// paddedLine is a cache line of its own.
type paddedLine struct {
	_ [64]byte
	v atomic.Uint64
	_ [56]byte
}

// abort is the value that tells the partner to give up.
const abort = 1 << 62

// partner is the thread at the other end of a pair probe: one for the
// process, made at its first probe, locked to its goroutine at real-time
// priority where it may and blocked in the kernel (a futex, not a
// channel: waking a channel waiter goes through the Go scheduler, which a
// loaded machine delays by milliseconds) until a probe asks for it. Being
// real-time, it runs the moment it is woken.
type partner struct {
	// lost is set when the partner did not finish a probe within
	// partnerLost: it is not asked again, so that it cannot still be at
	// a probe when the next one starts
	lost bool
	cmd  atomic.Uint32 // partnerIdle, the CPU to probe on + 1, or partnerTaken
	here atomic.Uint32 // 1 once it is on its CPU for the asked probe
	done atomic.Uint32 // 1 once the asked probe is over
	line paddedLine
	xfer []float64 // the copies it timed, once done
}

// The partner's commands beside a CPU: none, and one it has taken.
const (
	partnerIdle  = 0
	partnerTaken = 1 << 30
)

// partnerLost is how long a probe waits for the partner to be done with
// it: it gives up within pairBudget of running, so a partner still busy
// after this long is not running at all.
const partnerLost = time.Second

var thePartner = sync.OnceValue(func() *partner {
	pt := &partner{}
	started := make(chan struct{})
	go func() {
		p := pin()
		close(started)
		if p == nil {
			return
		}
		for {
			c := pt.cmd.Load()
			if c == partnerIdle || c == partnerTaken {
				futexWait(&pt.cmd, c, time.Hour)
				continue
			}
			if !pt.cmd.CompareAndSwap(c, partnerTaken) {
				continue // the probe gave up on it first
			}
			pt.xfer = nil
			if p.to(int(c) - 1) {
				pt.here.Store(1)
				futexWake(&pt.here)
				pt.xfer = answer(&pt.line)
			}
			p.to(-1)
			pt.cmd.Store(partnerIdle)
			pt.done.Store(1)
			futexWake(&pt.done)
		}
	}()
	<-started
	return pt
})

const batches, trips = 3, 50

// answer is the partner's half: says it is there, answers each round
// trip, then copies the buffer each time it is told to, timing the copy.
func answer(line *paddedLine) []float64 {
	deadline := time.Now().Add(pairBudget)
	wait := func(v uint64) bool {
		for i := 1; ; i++ {
			x := line.v.Load()
			if x == v {
				return true
			}
			if x == abort || (i&1023 == 0 && time.Now().After(deadline)) {
				return false
			}
		}
	}
	b := bufs()
	v := uint64(1)
	line.v.Store(v) // here
	for range batches * trips {
		v++
		if !wait(v) {
			return nil
		}
		v++
		line.v.Store(v)
	}
	var out []float64
	for range Reps {
		v++
		if !wait(v) {
			return nil
		}
		t0 := time.Now()
		copy(b[1], b[0])
		out = append(out, float64(time.Since(t0).Nanoseconds()))
		v++
		line.v.Store(v)
	}
	return out
}

// probe runs a pair probe from the calling thread, pinned to cpu a, with
// the partner on cpu b.
func (pt *partner) probe(a, b int) (result.PairSpeed, bool) {
	out := result.PairSpeed{A: a, B: b}
	if pt.lost {
		return out, false
	}
	line := &pt.line
	line.v.Store(0)
	pt.done.Store(0)
	pt.here.Store(0)
	pt.cmd.Store(uint32(b) + 1)
	futexWake(&pt.cmd)
	// wait blocked, not spinning, until the partner is on its CPU: this
	// thread holds its own, and a partner woken here must not wait for it
	for t0 := time.Now(); pt.here.Load() == 0 && pt.done.Load() == 0 && time.Since(t0) < pairBudget; {
		futexWaitRaw(&pt.here, 0, pairBudget)
	}
	if pt.here.Load() == 0 && pt.cmd.CompareAndSwap(uint32(b)+1, partnerIdle) {
		// the partner did not run within the budget and never took the
		// probe: nothing to wait for
		return out, false
	}
	deadline := time.Now().Add(pairBudget)
	wait := func(v uint64) bool {
		for i := 1; line.v.Load() != v; i++ {
			if i&1023 == 0 && time.Now().After(deadline) {
				line.v.Store(abort)
				return false
			}
		}
		return true
	}
	// finish waits for the partner to be idle again, blocked: it is
	// real-time and gives up within its budget once it runs
	finish := func() {
		for t0 := time.Now(); pt.done.Load() == 0; {
			if time.Since(t0) > partnerLost {
				pt.lost = true
				return
			}
			futexWait(&pt.done, 0, pairBudget)
		}
	}
	if !wait(1) {
		finish()
		return out, false
	}
	buf := bufs()
	var bounce []float64
	v := uint64(1)
	for range batches {
		t0 := time.Now()
		for range trips {
			v++
			line.v.Store(v)
			v++
			if !wait(v) {
				finish()
				return out, false
			}
		}
		bounce = append(bounce, float64(time.Since(t0).Nanoseconds())/trips)
	}
	for range Reps {
		for i := range buf[0] {
			buf[0][i]++ // the buffer's lines are now this CPU's
		}
		v++
		line.v.Store(v)
		v++
		if !wait(v) {
			finish()
			return out, false
		}
	}
	finish()
	if pt.lost || len(pt.xfer) == 0 {
		return out, false
	}
	out.BounceNs, out.XferNs = slices.Min(bounce), slices.Min(pt.xfer)
	return out, true
}

// MaxCPUs bounds the CPUs a probe times (each costs about 0.15 ms).
const MaxCPUs = 8

// OnlineCPUs are the CPUs this process may run on, in order, the first
// MaxCPUs of them.
func OnlineCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return []int{0}
	}
	var out []int
	for c := 0; c < 1024 && len(out) < min(set.Count(), MaxCPUs); c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// Ticks are one CPU's cumulative times from /proc/stat, in clock ticks.
type Ticks struct {
	Busy, Idle, Steal float64
}

// ReadTicks reads every CPU's line of /proc/stat ("cpuN ..."), by CPU.
func ReadTicks() map[int]Ticks {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil
	}
	return parseTicks(string(b))
}

func parseTicks(s string) map[int]Ticks {
	out := map[int]Ticks{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil {
			continue
		}
		v := make([]float64, 8)
		for i := range v {
			v[i], _ = strconv.ParseFloat(f[i+1], 64)
		}
		// user nice system idle iowait irq softirq steal
		out[n] = Ticks{Busy: v[0] + v[1] + v[2] + v[5] + v[6], Idle: v[3] + v[4], Steal: v[7]}
	}
	return out
}
