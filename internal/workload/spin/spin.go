// Package spin is the noisy neighbour's load: a process that burns CPU
// (a busy loop, the paper's CPU-bound container) or wakes periodically
// wanting a share of a CPU. It measures nothing of the network; its client
// half is what runs in a neighbour pod, its figure the CPU it took.
package spin

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

func init() { workload.Register(Spin{}) }

// Name is the workload's name.
const Name = "spin"

// DutyKey is the Params.Extra key of the share of a CPU it wants, in
// percent ("10%" or "10"; default 100: a busy loop). It is set by the
// neighbours experiment, not a flag.
const DutyKey = "duty"

// Period is the cycle of a periodic load: busy duty·Period, then asleep.
const Period = 10 * time.Millisecond

// Spin is the workload.
type Spin struct{}

// Name implements workload.Workload.
func (Spin) Name() string { return Name }

// Summary implements workload.Workload.
func (Spin) Summary() string {
	return "a noisy neighbour's CPU load (busy loop, or a periodic share of a CPU): the CPU it took, nothing of the network"
}

// Proto implements workload.Workload.
func (Spin) Proto() string { return "tcp" }

// Defaults implements workload.Workload.
func (Spin) Defaults(p *workload.Params) {
	if p.Duration == 0 {
		p.Duration = 5 * time.Second
	}
	if p.MessageSize == 0 {
		p.MessageSize = 1
	}
}

// Validate implements workload.Workload.
func (Spin) Validate(p workload.Params) error {
	if _, err := Duty(p.Extra[DutyKey]); err != nil {
		return err
	}
	return workload.ValidateCommon(p, 0, 1<<30)
}

// Duty parses a share of a CPU: "" is 100 %.
func Duty(s string) (float64, error) {
	if s == "" {
		return 1, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || v <= 0 || v > 100 {
		return 0, fmt.Errorf("CPU share %q; use a percentage above 0 and at most 100, e.g. 10%%", s)
	}
	return v / 100, nil
}

// Serve implements workload.Workload: nothing to serve.
func (Spin) Serve(ctx context.Context, _ workload.Params, ready func()) (workload.Report, error) {
	ready()
	<-ctx.Done()
	return workload.Report{}, nil
}

var sink atomic.Uint64

// Run burns CPU until p.Duration has passed or ctx ends: in every Period,
// busy for its duty's share, asleep for the rest.
func (Spin) Run(ctx context.Context, p workload.Params, _ netip.AddrPort) (workload.Report, error) {
	duty, err := Duty(p.Extra[DutyKey])
	if err != nil {
		return workload.Report{}, err
	}
	start := time.Now()
	end := start.Add(p.Duration)
	busy := time.Duration(duty * float64(Period))
	var x uint64
	for ctx.Err() == nil {
		t0 := time.Now()
		if !t0.Before(end) {
			break
		}
		for i := 0; ; i++ {
			x = x*6364136223846793005 + 1442695040888963407
			if i&1023 == 0 && time.Since(t0) >= busy {
				break
			}
		}
		if rest := Period - time.Since(t0); duty < 1 && rest > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(rest):
			}
		}
	}
	sink.Add(x)
	return workload.Report{Seconds: time.Since(start).Seconds()}, nil
}

// Metrics implements workload.Workload: the time it ran (the CPU it took
// is the client's CPU the measure path adds).
func (Spin) Metrics(_ workload.Params, c, _ workload.Report) (result.Metrics, string, error) {
	return result.Metrics{DurationS: result.F(c.Seconds)}, "", nil
}

// Figures implements workload.Workload.
func (Spin) Figures() []result.Figure {
	return []result.Figure{{Key: result.KeyClientCPU, Label: "CPU s/s", Unit: "s/s", Better: result.LowerBetter, Kind: result.KindCost}}
}
