// Package workload defines a measurement that runs inside cnperf agents: a
// server half and a client half, each producing a Report, and how the two
// Reports become the result's metrics. Implementations live in subpackages
// and register by name from init().
package workload

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/option"
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
	// Figures are the headline figures of its results, in the order a
	// report shows them: the first is its main one.
	Figures() []result.Figure
}

var reg = registry.New[Workload]("workload", "`cnperf workloads` lists them")

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

// Optioned is implemented by a workload that takes options: the
// Params.Extra keys it reads, each a `cnperf run` flag of that name.
type Optioned interface {
	Options() []option.Spec
}

// OptionChecker is implemented by a workload whose options' values need
// more than their kind's check (a list of rates, of byte counts).
type OptionChecker interface {
	CheckOptions(extra map[string]string) error
}

// OptionsOf returns the options w declares (none when it declares none).
func OptionsOf(w Workload) []option.Spec {
	if o, ok := w.(Optioned); ok {
		return o.Options()
	}
	return nil
}

// Takers lists the registered workloads that declare option name.
func Takers(name string) []string {
	var out []string
	for _, n := range Names() {
		w, _ := Get(n)
		if _, ok := option.Find(OptionsOf(w), name); ok {
			out = append(out, n)
		}
	}
	return out
}

// Flags lists the union of the registered workloads' options as flags, in
// the order of the workloads' names and then of their declarations; an
// option several workloads take is one flag, its usage naming them.
func Flags() []Flag {
	var out []Flag
	seen := map[string]bool{}
	for _, n := range Names() {
		w, _ := Get(n)
		for _, s := range OptionsOf(w) {
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			takers := Takers(s.Name)
			usage := strings.Join(takers, "/") + ": " + s.Help
			if s.Kind == option.Enum {
				usage += " (" + strings.Join(s.Values, " or ") + ")"
			}
			if d := defaults(s.Name, takers); d != "" {
				usage += " (default " + d + ")"
			}
			out = append(out, Flag{Name: s.Name, Usage: usage, Bool: s.Kind == option.Bool})
		}
	}
	return out
}

// defaults says option name's default: "350", or "64 for http_rate/tcp_rate,
// 16 for http_qps" when its takers differ.
func defaults(name string, takers []string) string {
	var vals []string
	by := map[string][]string{}
	for _, n := range takers {
		w, _ := Get(n)
		s, _ := option.Find(OptionsOf(w), name)
		if s.Default == "" {
			continue
		}
		if by[s.Default] == nil {
			vals = append(vals, s.Default)
		}
		by[s.Default] = append(by[s.Default], n)
	}
	if len(vals) == 1 && len(by[vals[0]]) == len(takers) {
		return vals[0]
	}
	var parts []string
	for _, v := range vals {
		parts = append(parts, v+" for "+strings.Join(by[v], "/"))
	}
	return strings.Join(parts, ", ")
}

// ValidateExtra checks the workload options of a run (Params.Extra as the
// user or a suite set them) against the selected workloads' declarations:
// a key none of them takes is an error naming the workloads that do, and a
// value is checked by every selected workload that takes it.
func ValidateExtra(names []string, extra map[string]string) error {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := extra[k]
		var takers []Workload
		measureTakes := false
		for _, n := range names {
			if m, ok := GetMeasure(n); ok {
				// not an agent workload: it takes the options it declares
				if s, ok := option.Find(m.Options, k); ok {
					if err := s.Check(v); err != nil {
						return fmt.Errorf("--%s %q: %s", k, v, strings.TrimPrefix(err.Error(), fmt.Sprintf("option %s=%q: ", k, v)))
					}
					measureTakes = true
				}
				continue
			}
			w, err := Get(n)
			if err != nil {
				return err
			}
			s, ok := option.Find(OptionsOf(w), k)
			if !ok {
				continue
			}
			if err := s.Check(v); err != nil {
				return fmt.Errorf("--%s %q: %s", k, v, strings.TrimPrefix(err.Error(), fmt.Sprintf("option %s=%q: ", k, v)))
			}
			takers = append(takers, w)
		}
		if len(takers) == 0 && !measureTakes {
			given := "--" + k + " " + v
			if v == "" {
				given = "--" + k
			}
			all := Takers(k)
			for _, n := range MeasureNames() {
				if m, _ := GetMeasure(n); func() bool { _, ok := option.Find(m.Options, k); return ok }() {
					all = append(all, n)
				}
			}
			if len(all) == 0 {
				return fmt.Errorf("%s: no workload takes --%s; drop it", given, k)
			}
			return fmt.Errorf("%s with %s: --%s applies to %s; select one of them or drop --%s",
				given, strings.Join(names, ", "), k, strings.Join(all, ", "), k)
		}
		for _, w := range takers {
			c, ok := w.(OptionChecker)
			if !ok {
				continue
			}
			if err := c.CheckOptions(map[string]string{k: v}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Connections is how a workload uses connections, for reports that set
// short connections against long ones (the ClusterIP study).
type Connections struct {
	// Style is "short" (a new connection per transaction), "long" (one
	// kept for the whole run) or "" (neither says).
	Style string
	// ConnectBound says a transaction's time is mostly the connect: its
	// median is worth a column of its own.
	ConnectBound bool
}

// ConnectionUser is implemented by workloads that declare how they use
// connections, given the options of a result (Result.Params as text).
type ConnectionUser interface {
	Connections(extra map[string]string) Connections
}

// ConnectionsOf asks workload wl how a result with params (its
// Result.Params) used connections; nothing when it does not say.
func ConnectionsOf(wl string, params map[string]any) Connections {
	w, err := Get(wl)
	if err != nil {
		return Connections{}
	}
	cu, ok := w.(ConnectionUser)
	if !ok {
		return Connections{}
	}
	text := map[string]string{}
	for k, v := range params {
		if s, ok := v.(string); ok {
			text[k] = s
		}
	}
	return cu.Connections(text)
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

// HTTP is implemented by workloads whose requests are HTTP: a target given
// to them from outside a lab (cnperf load) is a URL, not HOST:PORT.
type HTTP interface {
	HTTP() bool
}

// IsHTTP reports whether w speaks HTTP.
func IsHTTP(w Workload) bool {
	h, ok := w.(HTTP)
	return ok && h.HTTP()
}

// Varied is implemented by workloads that a comparison runs in several
// variants unless the user chose one (http_qps through a service: short
// and keep-alive connections). Each variant is a set of Params.Extra keys;
// a variant whose keys the user set is not multiplied.
type Varied interface {
	Variants() []map[string]string
}

// Measure is a measurement that is not an agent workload — the runner or
// an experiment makes it itself (start-up time) — but is selected, listed
// and reported like one.
type Measure struct {
	Name, Summary string
	Figures       []result.Figure
	// Options are the workload options (Params.Extra keys, flags of the
	// agent workloads it drives) it takes; none by default.
	Options []option.Spec
}

var measures = registry.New[Measure]("measurement", "`cnperf workloads` lists them")

// RegisterMeasure adds a measurement (call from init).
func RegisterMeasure(m Measure) { measures.Register(m.Name, m) }

// GetMeasure finds a measurement by name.
func GetMeasure(name string) (Measure, bool) {
	m, err := measures.Get(name)
	return m, err == nil
}

// MeasureNames lists the measurements, sorted.
func MeasureNames() []string { return measures.Names() }

// FiguresOf lists what the workload or measurement name reports, headline
// first (a registered workload's figures, else a measure's; the
// transaction rate for a name neither knows). The table, the summaries,
// compare and recommend all read figures through it.
func FiguresOf(name string) []result.Figure {
	if w, err := Get(name); err == nil {
		if fs := w.Figures(); len(fs) > 0 {
			return fs
		}
	}
	if m, ok := GetMeasure(name); ok && len(m.Figures) > 0 {
		return m.Figures
	}
	return []result.Figure{result.FigTransactions}
}
