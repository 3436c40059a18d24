// Package agent is the small program cnperf starts inside every pod: the same
// binary in `agent` mode, driven by the coordinator over a control channel
// that does not share the measured path (a Unix socket in the lab; a TCP
// port on a pod in Kubernetes). The protocol is newline-delimited JSON, one
// job per connection: a request, then events until "done".
package agent

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
)

// Request is one job for an agent.
type Request struct {
	Op       string          `json:"op"` // "ping", "stats", "serve", "run"
	Workload string          `json:"workload,omitempty"`
	Params   workload.Params `json:"params"`
	Addr     string          `json:"addr,omitempty"` // run: what to dial
}

// Event is an agent's answer.
type Event struct {
	Event  string          `json:"event"` // "pong", "stats", "ready", "done", "error"
	Report workload.Report `json:"report"`
	Error  string          `json:"error,omitempty"`
	PID    int             `json:"pid,omitempty"`
	Stats  *Stats          `json:"stats,omitempty"`
}

// Stats is what an agent holds at one moment, for a soak: its resident
// memory, open file descriptors and goroutines (the one serving the stats
// request included).
type Stats struct {
	RSSBytes   int64 `json:"rss_bytes"`
	FDs        int   `json:"fds"`
	Goroutines int   `json:"goroutines"`
}

// ReadStats reads the calling process's stats from /proc/self.
func ReadStats() (Stats, error) {
	st := Stats{Goroutines: runtime.NumGoroutine()}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return st, err
	}
	if st.RSSBytes, err = statusKB(string(b), "VmRSS"); err != nil {
		return st, err
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return st, err
	}
	st.FDs = len(fds) - 1 // the directory being read
	return st, nil
}

// statusKB reads a "Key:  N kB" line of /proc/PID/status, in bytes.
func statusKB(status, key string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != key {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			break
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			break
		}
		return n * 1024, nil
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", key)
}

// ParseAddr splits "unix:/path" or "tcp:host:port" into a network and address.
func ParseAddr(s string) (network, addr string, err error) {
	n, a, ok := strings.Cut(s, ":")
	if !ok || (n != "unix" && n != "tcp") || a == "" {
		return "", "", fmt.Errorf("control address %q; use unix:/path/to.sock or tcp:host:port", s)
	}
	return n, a, nil
}

// Serve runs the agent on listen until ctx ends or the parent process
// (parentPID, if non-zero) goes away, so an agent never outlives its
// coordinator.
func Serve(ctx context.Context, listen string, parentPID int) error {
	network, addr, err := ParseAddr(listen)
	if err != nil {
		return err
	}
	if network == "unix" {
		_ = os.Remove(addr)
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if parentPID > 0 {
		go func() {
			t := time.NewTicker(500 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					if syscall.Kill(parentPID, 0) != nil {
						cancel()
						return
					}
				}
			}
		}()
	}
	go func() { <-ctx.Done(); ln.Close() }()
	var wg sync.WaitGroup
	for {
		c, err := ln.Accept()
		if err != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			handle(ctx, c)
		}()
	}
	wg.Wait()
	if network == "unix" {
		_ = os.Remove(addr)
	}
	return nil
}

func handle(ctx context.Context, c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	enc := json.NewEncoder(c)
	var req Request
	line, err := r.ReadBytes('\n')
	if err != nil {
		return
	}
	if err := json.Unmarshal(line, &req); err != nil {
		_ = enc.Encode(Event{Event: "error", Error: "bad request: " + err.Error()})
		return
	}
	switch req.Op {
	case "ping":
		_ = enc.Encode(Event{Event: "pong", PID: os.Getpid()})
		return
	case "stats":
		st, err := ReadStats()
		if err != nil {
			_ = enc.Encode(Event{Event: "error", Error: err.Error()})
			return
		}
		_ = enc.Encode(Event{Event: "stats", PID: os.Getpid(), Stats: &st})
		return
	}
	w, err := workload.Get(req.Workload)
	if err != nil {
		_ = enc.Encode(Event{Event: "error", Error: err.Error()})
		return
	}
	// Anything more from the coordinator, or its hanging up, ends the job.
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = r.ReadByte()
		cancel()
	}()
	cpu0 := cpuSeconds()
	var rep workload.Report
	switch req.Op {
	case "serve":
		var once sync.Once
		rep, err = w.Serve(jctx, req.Params, func() {
			once.Do(func() { _ = enc.Encode(Event{Event: "ready"}) })
		})
	case "run":
		var ap netip.AddrPort
		ap, err = netip.ParseAddrPort(req.Addr)
		if err == nil {
			rep, err = w.Run(jctx, req.Params, ap)
		}
	default:
		err = fmt.Errorf("unknown op %q", req.Op)
	}
	rep.CPUSeconds = cpuSeconds() - cpu0
	if err != nil {
		_ = enc.Encode(Event{Event: "error", Error: err.Error(), Report: rep})
		return
	}
	_ = enc.Encode(Event{Event: "done", Report: rep})
}

// cpuSeconds is the user+system time of the agent and of the children it
// has waited for (a reference tool such as iperf3 run by a job).
func cpuSeconds() float64 {
	var total float64
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
		}
	}
	return total
}

// Client drives one agent.
type Client struct {
	Network, Addr string
	// Health, when set, says what became of the agent when it does not
	// answer in time or hangs up: nil while it looks alive, else the
	// cause (its process stopped or gone, its container removed, its pod
	// deleted). The backend that started the agent sets it.
	Health func(ctx context.Context) error
	// Alive says what Health saw when it found nothing wrong ("its pod
	// cnperf-a is Running"): all that is known of an agent that stopped
	// answering while it looks alive. Empty: "it looks alive to its
	// backend".
	Alive string

	mu    sync.Mutex
	fault error // the cause Health named last; checked again before the next job
}

// NewClient parses a control address.
func NewClient(control string) (*Client, error) {
	n, a, err := ParseAddr(control)
	if err != nil {
		return nil, err
	}
	return &Client{Network: n, Addr: a}, nil
}

func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, c.Network, c.Addr)
}

// Wait pings the agent until it answers or ctx ends.
func (c *Client) Wait(ctx context.Context) (int, error) {
	var last error
	for {
		ev, err := c.once(ctx, Request{Op: "ping"})
		if err == nil && ev.Event == "pong" {
			return ev.PID, nil
		}
		last = err
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("agent at %s did not answer: %v", c.Addr, last)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Stats asks the agent for its memory, descriptors and goroutines.
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	ctx, cancel := withDefaultTimeout(ctx, grace)
	defer cancel()
	ev, err := c.once(ctx, Request{Op: "stats"})
	if err != nil {
		return Stats{}, c.cause(err, "stats", grace)
	}
	if ev.Event != "stats" || ev.Stats == nil {
		return Stats{}, fmt.Errorf("agent at %s: stats: %s", c.Addr, cmp.Or(ev.Error, "no answer"))
	}
	return *ev.Stats, nil
}

// once sends one request and reads one answer, within ctx: a stopped
// agent still accepts the connection, so the answer is what is bounded.
func (c *Client) once(ctx context.Context, req Request) (Event, error) {
	conn, err := c.dial(ctx)
	if err != nil {
		return Event{}, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return Event{}, err
	}
	var ev Event
	if err = json.NewDecoder(conn).Decode(&ev); err != nil && ctx.Err() != nil {
		return ev, ctx.Err()
	}
	return ev, err
}

// Grace is what the coordinator allows every control message beyond the
// job's own time.
const Grace = 10 * time.Second

// Slack is how long the coordinator waits for a server's "ready" and, once
// it is stopped, for its report, in a job of duration d: Grace plus a
// quarter of d (a bigger cell sets up and hands back more).
func Slack(d time.Duration) time.Duration { return grace + d/4 }

// grace is Grace; tests shorten it.
var grace = Grace

// RunDeadline is how long the coordinator waits for a client's report in a
// job of duration d: d and twice Slack(d) (the client's connect before and
// its last answers after).
func RunDeadline(d time.Duration) time.Duration { return d + 2*Slack(d) }

// ErrNoAnswer is an agent that did not answer within its deadline or hung
// up; the error that wraps it names the cause where Health finds one.
var ErrNoAnswer = errors.New("the agent did not answer")

// cause is the error of a job whose message did not come: the agent's
// health, where it names a cause, else what the wait saw.
func (c *Client) cause(err error, what string, within time.Duration) error {
	timedOut := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)
	var msg string
	switch {
	case what == "":
		msg = "reaching the agent: " + err.Error()
	case timedOut:
		msg = fmt.Sprintf("no %s from the agent within %v", what, within.Round(100*time.Millisecond))
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		msg = fmt.Sprintf("the agent hung up before its %s", what)
	default:
		msg = fmt.Sprintf("%s: %v", what, err)
	}
	if h := c.check(); h != nil {
		return &noAnswer{msg + ": " + h.Error(), h}
	}
	if timedOut && c.Health != nil {
		// say what is known, not a guess at the cause: a process stopped
		// inside a container and an overloaded machine look alike here
		alive := c.Alive
		if alive == "" {
			alive = "it looks alive to its backend"
		}
		msg += "; the agent stopped answering while " + alive + ": no cause is known"
	}
	return &noAnswer{msg, err}
}

// noAnswer is an ErrNoAnswer with its cause.
type noAnswer struct {
	msg   string
	cause error
}

func (e *noAnswer) Error() string   { return e.msg }
func (e *noAnswer) Unwrap() []error { return []error{ErrNoAnswer, e.cause} }

// check runs Health (bounded: it may ask an API that is itself stuck) and
// keeps the cause it names for the next job.
func (c *Client) check() error {
	if c.Health == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h := c.Health(ctx)
	c.mu.Lock()
	c.fault = h
	c.mu.Unlock()
	return h
}

// Check asks Health now (when set) and keeps the cause it names, so that
// the agent's next job fails at once while it holds: nil when the agent
// looks alive.
func (c *Client) Check() error { return c.check() }

// stillFaulty fails a job at once when Health named a cause before and
// still does: a frozen agent costs one deadline, not one per cell.
func (c *Client) stillFaulty() error {
	c.mu.Lock()
	f := c.fault
	c.mu.Unlock()
	if f == nil {
		return nil
	}
	if h := c.check(); h != nil {
		return &noAnswer{h.Error() + " (found before this job; not waited for again)", h}
	}
	return nil
}

func withDefaultTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// Server is a serve job in progress.
type Server struct {
	c     *Client
	conn  net.Conn
	dec   *json.Decoder
	slack time.Duration
}

// Serve starts the server half of a workload and returns once it listens,
// or fails when the agent's "ready" does not come within Slack(p.Duration).
func (c *Client) Serve(ctx context.Context, wl string, p workload.Params) (*Server, error) {
	if err := c.stillFaulty(); err != nil {
		return nil, err
	}
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, c.cause(err, "", 0)
	}
	if err := json.NewEncoder(conn).Encode(Request{Op: "serve", Workload: wl, Params: p}); err != nil {
		conn.Close()
		return nil, err
	}
	slack := Slack(p.Duration)
	_ = conn.SetReadDeadline(time.Now().Add(slack))
	dec := json.NewDecoder(conn)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var ev Event
	if err := dec.Decode(&ev); err != nil {
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("server did not start: %w", c.cause(err, `"ready"`, slack))
	}
	if ev.Event != "ready" {
		conn.Close()
		return nil, fmt.Errorf("server did not start: %s", ev.Error)
	}
	_ = conn.SetReadDeadline(time.Time{})
	return &Server{c: c, conn: conn, dec: dec, slack: slack}, nil
}

// Stop ends the serve job and returns the server's report, waiting at
// most the job's Slack for it.
func (s *Server) Stop() (workload.Report, error) {
	defer s.conn.Close()
	if err := s.c.stillFaulty(); err != nil {
		return workload.Report{}, fmt.Errorf("server report: %w", err)
	}
	_, _ = s.conn.Write([]byte("\n"))
	_ = s.conn.SetReadDeadline(time.Now().Add(s.slack))
	var ev Event
	if err := s.dec.Decode(&ev); err != nil {
		return workload.Report{}, fmt.Errorf("server report: %w", s.c.cause(err, "report", s.slack))
	}
	if ev.Event != "done" {
		return ev.Report, errors.New(ev.Error)
	}
	return ev.Report, nil
}

// Run runs the client half of a workload against addr. Without a deadline
// in ctx, the report must come within RunDeadline(p.Duration).
func (c *Client) Run(ctx context.Context, wl string, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	if err := c.stillFaulty(); err != nil {
		return workload.Report{}, err
	}
	parent := ctx
	ctx, cancel := withDefaultTimeout(ctx, RunDeadline(p.Duration))
	defer cancel()
	within := RunDeadline(p.Duration)
	if dl, ok := ctx.Deadline(); ok {
		within = time.Until(dl)
	}
	conn, err := c.dial(ctx)
	if err != nil {
		return workload.Report{}, c.cause(err, "", 0)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := json.NewEncoder(conn).Encode(Request{Op: "run", Workload: wl, Params: p, Addr: addr.String()}); err != nil {
		return workload.Report{}, err
	}
	var ev Event
	if err := json.NewDecoder(conn).Decode(&ev); err != nil {
		if perr := parent.Err(); errors.Is(perr, context.Canceled) {
			return workload.Report{}, perr // the caller ended it
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return workload.Report{}, c.cause(err, "report", within)
	}
	if ev.Event != "done" {
		return ev.Report, errors.New(ev.Error)
	}
	return ev.Report, nil
}
