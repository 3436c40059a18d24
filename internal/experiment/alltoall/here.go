package alltoall

import (
	"context"
	"net/netip"
	"strconv"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
	a2a "github.com/cnperf/cnperf/internal/workload/alltoall"
)

// local says whether every pod is a local namespace without an agent:
// the exchange then runs in this process (a2a.Exchange).
func local(d backend.Deployment, pods []string) bool {
	for _, name := range pods {
		p := d.Pod(name)
		if p == nil || p.NetNS == "" || p.Agent != nil {
			return false
		}
	}
	return true
}

// measureHere is Measure's exchange run in this process, each pod's
// sockets made inside its namespace.
func measureHere(ctx context.Context, d backend.Deployment, w workload.Workload, params workload.Params, pods []string, res result.Result) result.Result {
	n := len(pods)
	x := a2a.Exchange{NetNS: make([]string, n), MessageSize: params.MessageSize, Duration: params.Duration,
		Dial: func(from, to, port int) (netip.AddrPort, error) {
			return d.Dial(ctx, pods[from], pods[to], w.Proto(), port)
		}}
	for i, name := range pods {
		x.NetNS[i] = "/run/netns/" + d.Pod(name).NetNS
	}
	meter, hasCPU := d.(backend.CPUMeter)
	var cpu0 backend.CPUTimes
	var t0 time.Time
	x.Started = func() {
		t0 = time.Now()
		if hasCPU {
			var err error
			cpu0, err = meter.MachineCPU(ctx)
			hasCPU = err == nil
		}
	}
	rep, err := x.Run(ctx)
	wall := time.Since(t0)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	mp := params
	mp.Extra = map[string]string{a2a.ExtraPods: strconv.Itoa(n)}
	mt, h, err := w.Metrics(mp, rep, workload.Report{})
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if hasCPU {
		if cpu1, err := meter.MachineCPU(ctx); err == nil {
			mt.CPU = measure.Cost(cpu1.Sub(cpu0), wall, rep.CPUSeconds, -1, mt)
		}
	}
	res.Metrics, res.Histogram = mt, h
	res.Params["in_process"] = true
	return res
}
