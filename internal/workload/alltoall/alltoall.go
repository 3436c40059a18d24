// Package alltoall is the agent half of the all-to-all experiment (seed
// 001's scalability figure, as osu_alltoall measures it): N pods, each
// sending one message to every other and waiting until it has received
// one from every other, round after round. Every pod runs one job: it
// listens, connects to every peer, and runs rounds until rank 0, when the
// duration has passed, marks its messages of a round as the last; so every
// pod runs exactly the same number of rounds, and each received exactly
// rounds·(N-1) messages.
package alltoall

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

func init() { workload.Register(AllToAll{}) }

// Name is the workload's name.
const Name = "alltoall"

// Keys of Params.Extra the experiment sets for each pod.
const (
	RankKey  = "rank"  // this pod's index, 0-based
	PeersKey = "peers" // every rank's address as this pod dials it, "-" for itself
)

// DefaultSize is the study's message size.
const DefaultSize = 1024

// ConnectTimeout bounds how long a pod waits for its peers to listen and
// connect.
const ConnectTimeout = 45 * time.Second

// Extra keys of its report and result.
const (
	ExtraPods     = "pods"          // N
	ExtraRounds   = "rounds"        // rounds every pod ran
	ExtraExpected = "expected_msgs" // rounds·N·(N-1)
	ExtraSent     = result.ExtraSentMessages
)

// AllToAll is the workload.
type AllToAll struct{}

// Name implements workload.Workload.
func (AllToAll) Name() string { return Name }

// Summary implements workload.Workload.
func (AllToAll) Summary() string {
	return "N pods exchange messages all-to-all in rounds (osu_alltoall): time per round, aggregate throughput (--pods, --spread)"
}

// Proto implements workload.Workload.
func (AllToAll) Proto() string { return "tcp" }

// Defaults implements workload.Workload.
func (AllToAll) Defaults(p *workload.Params) {
	if p.MessageSize == 0 {
		p.MessageSize = DefaultSize
	}
	if p.Duration == 0 {
		p.Duration = 5 * time.Second
	}
}

// Validate implements workload.Workload.
func (AllToAll) Validate(p workload.Params) error {
	if p.Direction != "" && p.Direction != "up" {
		return errors.New("alltoall has no direction; drop --direction")
	}
	return workload.ValidateCommon(p, 2, 1<<20)
}

// Figures implements workload.Workload: the median and p99 time of a
// round, the aggregate throughput of every pod's received bytes.
func (AllToAll) Figures() []result.Figure {
	return []result.Figure{
		{Key: "latency_us.p50", Label: "round p50 us", Unit: "us", Better: result.LowerBetter, Kind: result.KindLatency, Ratio: true},
		{Key: "latency_us.p99", Label: "round p99 us", Unit: "us", Better: result.LowerBetter, Kind: result.KindLatency},
		result.FigThroughput,
	}
}

// Serve implements workload.Workload: every pod's job is a Run.
func (AllToAll) Serve(ctx context.Context, _ workload.Params, ready func()) (workload.Report, error) {
	ready()
	<-ctx.Done()
	return workload.Report{}, nil
}

// peers parses PeersKey.
func peers(p workload.Params) (rank int, addrs []string, err error) {
	addrs = strings.Split(p.Extra[PeersKey], ",")
	rank, err = strconv.Atoi(p.Extra[RankKey])
	if err != nil || rank < 0 || rank >= len(addrs) || len(addrs) < 2 {
		return 0, nil, fmt.Errorf("alltoall: rank %q of peers %q", p.Extra[RankKey], p.Extra[PeersKey])
	}
	return rank, addrs, nil
}

// inbox counts what each peer sent.
type inbox struct {
	mu    sync.Mutex
	cond  *sync.Cond
	got   []int64 // messages from each rank
	last  int64   // the round rank 0 marked as the last (0: none yet)
	err   error
	bytes int64
}

func (b *inbox) add(from int, n int, final bool) {
	b.mu.Lock()
	b.got[from]++
	b.bytes += int64(n)
	if final && b.last == 0 {
		b.last = b.got[from]
	}
	b.mu.Unlock()
	b.cond.Broadcast()
}

func (b *inbox) fail(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
	b.cond.Broadcast()
}

// wait blocks until every peer's round-r message came; it returns whether
// r was the last round.
func (b *inbox) wait(r int64, rank int) (last bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		if b.err != nil {
			return false, b.err
		}
		done := true
		for i, n := range b.got {
			if i != rank && n < r {
				done = false
				break
			}
		}
		if done {
			return b.last == r, nil
		}
		b.cond.Wait()
	}
}

// Run implements workload.Workload: this pod's part of the exchange.
func (AllToAll) Run(ctx context.Context, p workload.Params, _ netip.AddrPort) (workload.Report, error) {
	rank, addrs, err := peers(p)
	if err != nil {
		return workload.Report{}, err
	}
	n := len(addrs)
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", ":"+strconv.Itoa(p.Port))
	if err != nil {
		return workload.Report{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var conns []net.Conn
	var cmu sync.Mutex
	keep := func(c net.Conn) {
		cmu.Lock()
		conns = append(conns, c)
		cmu.Unlock()
	}
	box := &inbox{got: make([]int64, n)}
	box.cond = sync.NewCond(&box.mu)
	go func() {
		<-ctx.Done()
		box.fail(ctx.Err()) // wakes a wait for a round that will not come
		ln.Close()
		cmu.Lock()
		for _, c := range conns {
			c.Close()
		}
		cmu.Unlock()
	}()
	var readers sync.WaitGroup
	// incoming: one connection from every peer, its rank first
	accepted := make(chan error, 1)
	go func() {
		for i := 0; i < n-1; {
			c, err := ln.Accept()
			if err != nil {
				accepted <- err
				return
			}
			keep(c)
			var hdr [4]byte
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				// a peer's dial that timed out on its side after the
				// kernel accepted it: it dials again
				c.Close()
				continue
			}
			from := int(binary.BigEndian.Uint32(hdr[:]))
			if from < 0 || from >= n || from == rank {
				accepted <- fmt.Errorf("alltoall: a peer says it is rank %d", from)
				return
			}
			i++
			readers.Add(1)
			go func() {
				defer readers.Done()
				buf := make([]byte, p.MessageSize)
				for {
					if _, err := io.ReadFull(c, buf); err != nil {
						if ctx.Err() == nil && !errors.Is(err, io.EOF) {
							box.fail(fmt.Errorf("alltoall: from rank %d: %w", from, err))
						}
						return
					}
					box.add(from, len(buf), from == 0 && buf[0] == 1)
				}
			}()
		}
		accepted <- nil
	}()
	// outgoing: one connection to every peer, retried until it listens
	out := make([]net.Conn, n)
	deadline := time.Now().Add(ConnectTimeout)
	for j := 1; j < n; j++ {
		to := (rank + j) % n
		for {
			d := net.Dialer{Timeout: 5 * time.Second}
			c, err := d.DialContext(ctx, "tcp", addrs[to])
			if err == nil {
				keep(c)
				out[to] = c
				break
			}
			if ctx.Err() != nil || time.Now().After(deadline) {
				return workload.Report{}, fmt.Errorf("alltoall: rank %d cannot reach rank %d at %s: %w", rank, to, addrs[to], err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], uint32(rank))
		if _, err := out[to].Write(hdr[:]); err != nil {
			return workload.Report{}, err
		}
	}
	select {
	case err := <-accepted:
		if err != nil {
			return workload.Report{}, fmt.Errorf("alltoall: rank %d accepting: %w", rank, err)
		}
	case <-ctx.Done():
		return workload.Report{}, ctx.Err()
	case <-time.After(time.Until(deadline)):
		return workload.Report{}, fmt.Errorf("alltoall: rank %d: not every peer connected within %v", rank, ConnectTimeout)
	}

	h := hist.New()
	msg := make([]byte, p.MessageSize)
	var rep workload.Report
	var sent int64
	var start time.Time
	for r := int64(1); ; r++ {
		t0 := time.Now()
		if r == 2 {
			start = t0 // round 1 waits for the slowest pod to start: not timed
		}
		msg[0] = 0
		if rank == 0 && r > 1 && t0.Sub(start) >= p.Duration {
			msg[0] = 1 // the last round
		}
		for j := 1; j < n; j++ {
			if _, err := out[(rank+j)%n].Write(msg); err != nil {
				if ctx.Err() != nil {
					return rep, ctx.Err()
				}
				return rep, fmt.Errorf("alltoall: rank %d sending round %d: %w", rank, r, err)
			}
			sent++
		}
		last, err := box.wait(r, rank)
		if err != nil {
			return rep, err
		}
		if r > 1 {
			h.Record(time.Since(t0))
		}
		if last || msg[0] == 1 {
			rep.Transactions = r
			break
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	cancel()
	readers.Wait()
	box.mu.Lock()
	var got int64
	for _, g := range box.got {
		got += g
	}
	rep.Messages, rep.Bytes = got, box.bytes
	box.mu.Unlock()
	rep.Extra = map[string]float64{ExtraSent: float64(sent)}
	rep.Histogram, err = h.Encode()
	return rep, err
}

// Metrics implements workload.Workload over the merged reports of every
// pod (measure.MergeReports): rounds and time per round over every pod,
// throughput of every byte received. It fails when any pod received other
// than rounds·(N-1) messages, or the pods disagree on the rounds run.
func (AllToAll) Metrics(p workload.Params, c, _ workload.Report) (result.Metrics, string, error) {
	npods, _ := strconv.Atoi(p.Extra[ExtraPods])
	if npods < 2 || c.Transactions == 0 || c.Seconds == 0 {
		return result.Metrics{}, "", fmt.Errorf("alltoall: no round completed")
	}
	rounds := c.Transactions / int64(npods) // every pod reported the same count
	if rounds*int64(npods) != c.Transactions {
		return result.Metrics{}, "", fmt.Errorf("alltoall: the pods ran different numbers of rounds (%d over %d pods)", c.Transactions, npods)
	}
	want := rounds * int64(npods) * int64(npods-1)
	if c.Messages != want || int64(c.Extra[ExtraSent]) != want {
		return result.Metrics{}, "", fmt.Errorf("alltoall: %d messages received and %.0f sent, want %d (%d rounds, %d pods)", c.Messages, c.Extra[ExtraSent], want, rounds, npods)
	}
	h, err := hist.Decode(c.Histogram)
	if err != nil {
		return result.Metrics{}, "", err
	}
	m := result.Metrics{
		LatencyUs: h.Summary(hist.Percentiles),
		// the timed window starts with round 2 (round 1 waits for the
		// slowest pod to start)
		ThroughputBps:    result.F(float64(c.Bytes) * float64(rounds-1) / float64(rounds) * 8 / c.Seconds),
		TransactionsPerS: result.F(float64(rounds-1) / c.Seconds),
		Transactions:     result.I(rounds),
		Messages:         result.I(c.Messages),
		Bytes:            result.I(c.Bytes),
		DurationS:        result.F(c.Seconds),
		Extra:            map[string]float64{ExtraPods: float64(npods), ExtraRounds: float64(rounds), ExtraExpected: float64(want)},
	}
	m.LatencyUs["mean"] = float64(h.Mean()) / 1e3
	return m, c.Histogram, nil
}
