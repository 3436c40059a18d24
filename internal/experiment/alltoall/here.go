package alltoall

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
	a2a "github.com/cnperf/cnperf/internal/workload/alltoall"
)

// neighbourLimit is the kernel's neighbour table limit (a test's to lower).
var neighbourLimit = lab.NeighbourLimit

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
	if dynamic, err := pin(ctx, d, pods); err != nil {
		res.Error = err.Error()
		return res
	} else if limit := neighbourLimit(); limit > 0 && dynamic > limit {
		res.Error = fmt.Sprintf("%d pods need %d neighbour entries through their gateways, more than the kernel's neighbour table shared by every namespace holds (net.ipv4.neigh.default.gc_thresh3 = %d, settable only in the host's namespace): use fewer pods", n, dynamic, limit)
		return res
	}
	x := a2a.Exchange{NetNS: make([]string, n), MessageSize: params.MessageSize, Duration: params.Duration,
		Dial: func(from, to, port int) (netip.AddrPort, error) {
			return d.Dial(ctx, pods[from], pods[to], w.Proto(), port)
		}}
	for i, name := range pods {
		x.NetNS[i] = "/run/netns/" + d.Pod(name).NetNS
	}
	meter, hasCPU := d.(backend.CPUMeter)
	var cpu0 ground.CPUTimes
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

// prepare pins, once the deployment is built, the neighbour entries of
// every pair of its pods (pin), so that they are in its record of what
// was built, one line a pod, and every cell's pods are pinned already.
func prepare(topo backend.Topology) func(context.Context, backend.Deployment) (func() error, error) {
	return func(ctx context.Context, d backend.Deployment) (func() error, error) {
		var names []string
		for _, ps := range topo.Pods {
			names = append(names, ps.Name)
		}
		_, err := pin(ctx, d, names)
		return nil, err
	}
}

// pin gives the pods of a local lab permanent neighbour entries for the
// peers they reach on-link (lab.PinPeers): N pods on one bridge would
// otherwise need N·(N-1) entries ARP learns, past the kernel's table
// shared by every namespace (64 pods on one bridge overflow 1,024).
// dynamic is how many entries, through gateways, ARP must still learn
// (-1: unknown); measureHere refuses, before measuring, an exchange
// needing more than that table holds.
func pin(ctx context.Context, d backend.Deployment, pods []string) (dynamic int, err error) {
	ld, ok := d.(interface {
		backend.LocalLab
		LabPod(name string) *lab.Pod
	})
	if !ok {
		return -1, nil
	}
	lp := make([]*lab.Pod, len(pods))
	for i, name := range pods {
		if lp[i] = ld.LabPod(name); lp[i] == nil {
			return 0, fmt.Errorf("no pod %q", name)
		}
	}
	if dynamic, err = ld.LocalLab().PinPeers(ctx, lp); err != nil {
		return 0, fmt.Errorf("pinning neighbour entries: %w", err)
	}
	return dynamic, nil
}
