// Package workload defines a measurement that runs inside cnperf agents: a
// server half and a client half, each producing a Report, and how the two
// Reports become the result's metrics. Implementations live in subpackages
// and register by name from init().
package workload

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/registry"
	"github.com/cnperf/cnperf/internal/result"
)

// Params are a workload's knobs; they cross the control channel as JSON.
type Params struct {
	Duration    time.Duration     `json:"duration"`
	MessageSize int               `json:"message_size"`
	Direction   string            `json:"direction,omitempty"` // "up": client sends; "down": server sends
	Port        int               `json:"port"`
	Extra       map[string]string `json:"extra,omitempty"`
}

// Report is what one half of a workload measured; it crosses the control
// channel as JSON. Histogram is an encoded HDR histogram of nanoseconds.
type Report struct {
	Bytes        int64              `json:"bytes,omitempty"`
	Messages     int64              `json:"messages,omitempty"`
	Transactions int64              `json:"transactions,omitempty"`
	Errors       int64              `json:"errors,omitempty"`
	Seconds      float64            `json:"seconds,omitempty"` // measured window
	Histogram    string             `json:"histogram,omitempty"`
	CPUSeconds   float64            `json:"cpu_seconds,omitempty"` // user+system of the agent in the job
	Extra        map[string]float64 `json:"extra,omitempty"`
	// Histograms are further encoded HDR histograms (ns) by name, e.g. the
	// uncorrected latency and send lag of an open-loop run.
	Histograms map[string]string `json:"histograms,omitempty"`
}

// Workload is one measurement.
type Workload interface {
	Name() string
	Summary() string
	// Proto is the transport the server listens on ("tcp" or "udp").
	Proto() string
	// Defaults fills what the user left zero.
	Defaults(p *Params)
	// Validate checks p, naming the fix.
	Validate(p Params) error
	// Serve binds, calls ready, and serves until ctx ends.
	Serve(ctx context.Context, p Params, ready func()) (Report, error)
	// Run drives the client half against addr for p.Duration.
	Run(ctx context.Context, p Params, addr netip.AddrPort) (Report, error)
	// Metrics turns both halves' reports into the result's figures.
	Metrics(p Params, client, server Report) (result.Metrics, string, error)
}

var reg = registry.New[Workload]("workload", "`cnperf workloads` lists them")

// mu guards flags.
var mu sync.RWMutex

// Register adds a workload; it panics on a duplicate (a programming error).
func Register(w Workload) { reg.Register(w.Name(), w) }

// Get finds a workload by name, or says which exist.
func Get(name string) (Workload, error) { return reg.Get(name) }

// Names lists registered workloads, sorted.
func Names() []string { return reg.Names() }

// ValidateCommon checks the knobs every workload shares.
func ValidateCommon(p Params, minSize, maxSize int) error {
	switch {
	case p.Duration <= 0 || p.Duration > time.Hour:
		return fmt.Errorf("duration %v out of range; use e.g. --duration 5s (at most 1h)", p.Duration)
	case p.MessageSize < minSize || p.MessageSize > maxSize:
		return fmt.Errorf("message size %d out of range; use %d to %d bytes", p.MessageSize, minSize, maxSize)
	case p.Direction != "" && p.Direction != "up" && p.Direction != "down":
		return fmt.Errorf("direction %q; use up (client sends) or down (server sends)", p.Direction)
	case p.Port < 0 || p.Port > 65535:
		return fmt.Errorf("port %d out of range", p.Port)
	}
	return nil
}

// StepResult is one finished step of a multi-step workload.
type StepResult struct {
	Params  Params
	Metrics result.Metrics
	Err     error
}

// Stepper is implemented by workloads measured in several steps: a rate
// ladder, a size sweep, a max-rate search. The runner calls Next with the
// user's params and the steps done so far; Next returns the next step's
// params and a label naming it ("rate=50000 size=350"), or ok=false when
// the sequence is complete. Each step becomes its own result.
type Stepper interface {
	Next(base Params, done []StepResult) (p Params, label string, ok bool)
}

// Flag is a workload-specific `cnperf run` flag; its value reaches the
// workload as Params.Extra[Name] when the user sets it.
type Flag struct {
	Name, Usage string
	// Bool makes it a switch: --name alone means "true" (--name=false too).
	Bool bool
}

var flags []Flag

// RegisterFlag adds a `cnperf run` flag for a workload (call from init).
// Several workloads may share one name (e.g. "rate"); it is defined once.
func RegisterFlag(f Flag) {
	mu.Lock()
	defer mu.Unlock()
	for _, g := range flags {
		if g.Name == f.Name {
			return
		}
	}
	flags = append(flags, f)
}

// Flags lists the registered workload flags.
func Flags() []Flag {
	mu.RLock()
	defer mu.RUnlock()
	return append([]Flag(nil), flags...)
}

// Bulk is implemented by workloads that move bytes one way (streams, bulk
// references): for them Params.Direction applies and the receiver's
// interface counter witnesses the payload that crossed.
type Bulk interface {
	Bulk() bool
}

// IsBulk reports whether w is a Bulk workload.
func IsBulk(w Workload) bool {
	b, ok := w.(Bulk)
	return ok && b.Bulk()
}

// Varied is implemented by workloads that a comparison runs in several
// variants unless the user chose one (http_qps through a service: short
// and keep-alive connections). Each variant is a set of Params.Extra keys;
// a variant whose keys the user set is not multiplied.
type Varied interface {
	Variants() []map[string]string
}
