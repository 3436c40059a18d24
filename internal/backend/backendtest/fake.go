// Package backendtest is a fake backend for tests: every pod is an agent
// served inside the test's own process on a unix socket, all pods on this
// machine's loopback. It builds nothing and needs no root, so the
// scheduler, the measure path and `cnperf clean`'s dispatch can be driven
// end to end on any machine. A test registers it in one line:
//
//	func init() { backend.Register(backendtest.Info) }
package backendtest

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/cleanup"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/tmpdir"
)

// Name is the fake's backend name.
const Name = "fake"

// Networks are the networks the fake deploys (the lab's names, so that
// plans check as usual): every pod on the loopback of this machine.
var Networks = []string{"host", "baseline"}

// Live counts the fake's deployments not yet torn down, across backends.
var Live atomic.Int64

// Cleaned records every request its Cleaner was given; CleanRemoves are
// the run ids it says it removed.
var (
	mu           sync.Mutex
	Cleaned      []cleanup.Request
	CleanRemoves []string
)

// Info registers the fake.
var Info = backend.Info{
	Name:    Name,
	Summary: "a test's fake: agents in the test's process, on loopback",
	Rank:    100,
	New:     func(c backend.Config) backend.Backend { return &Backend{} },
	Cleaner: cleaner{},
}

type cleaner struct{}

func (cleaner) Clean(_ context.Context, req cleanup.Request) ([]string, error) {
	mu.Lock()
	defer mu.Unlock()
	Cleaned = append(Cleaned, req)
	fmt.Fprintf(req.Out, "fake: cleaned %q\n", req.ID)
	return append([]string(nil), CleanRemoves...), nil
}

// Backend is the fake backend.
type Backend struct{ seq atomic.Int64 }

// Name implements backend.Backend.
func (*Backend) Name() string { return Name }

// Check implements backend.Backend.
func (b *Backend) Check(network string) error {
	_, err := b.Placements(network)
	return err
}

// Allows implements backend.Backend.
func (b *Backend) Allows(network string, p ground.Placement) (bool, string) {
	ps, err := b.Placements(network)
	if err != nil {
		return false, err.Error()
	}
	if !slices.Contains(ps, p) {
		return false, "the fake has no " + string(p)
	}
	return true, ""
}

// Placements implements backend.Backend.
func (*Backend) Placements(network string) ([]ground.Placement, error) {
	if !slices.Contains(Networks, network) {
		return nil, fmt.Errorf("the fake backend has no network %q", network)
	}
	return []ground.Placement{ground.SameHost, ground.CrossHost}, nil
}

// Deploy implements backend.Backend: an agent per pod, served in this
// process.
func (b *Backend) Deploy(ctx context.Context, topo backend.Topology) (backend.Deployment, error) {
	dir, err := tmpdir.Make("fake")
	if err != nil {
		return nil, err
	}
	actx, cancel := context.WithCancel(context.Background())
	d := &Deployment{id: fmt.Sprintf("fake%d", b.seq.Add(1)), network: topo.Network, dir: dir, cancel: cancel, pods: map[string]*backend.Pod{}}
	Live.Add(1)
	for _, ps := range topo.Pods {
		sock := "unix:" + filepath.Join(dir, ps.Name+".sock")
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			_ = agent.Serve(actx, sock, 0)
		}()
		c, err := agent.NewClient(sock)
		if err != nil {
			_ = d.Teardown()
			return nil, err
		}
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = c.Wait(wctx)
		wcancel()
		if err != nil {
			_ = d.Teardown()
			return nil, fmt.Errorf("fake agent %s: %w", ps.Name, err)
		}
		d.pods[ps.Name] = &backend.Pod{Name: ps.Name, Host: ps.Host, IP: netip.MustParseAddr("127.0.0.1"), Agent: c}
	}
	return d, nil
}

// Deployment is a fake deployment.
type Deployment struct {
	id, network, dir string
	cancel           context.CancelFunc
	wg               sync.WaitGroup
	pods             map[string]*backend.Pod
	once             sync.Once
}

// ID implements backend.Deployment.
func (d *Deployment) ID() string { return d.id }

// Network implements backend.Deployment.
func (d *Deployment) Network() string { return d.network }

// Pod implements backend.Deployment.
func (d *Deployment) Pod(name string) *backend.Pod { return d.pods[name] }

// Dial implements backend.Deployment: every pod is on loopback.
func (d *Deployment) Dial(_ context.Context, _, to, _ string, port int) (netip.AddrPort, error) {
	p := d.pods[to]
	if p == nil {
		return netip.AddrPort{}, fmt.Errorf("no pod %q", to)
	}
	return netip.AddrPortFrom(p.IP, uint16(port)), nil
}

// Params implements backend.Deployment.
func (d *Deployment) Params() map[string]any { return map[string]any{"fake": true} }

// AgentLog implements backend.Deployment.
func (d *Deployment) AgentLog(string) string { return "" }

// Environment implements backend.Deployment.
func (d *Deployment) Environment(context.Context, *result.Environment) {}

// Teardown implements backend.Deployment; twice is harmless.
func (d *Deployment) Teardown() error {
	d.once.Do(func() {
		d.cancel()
		d.wg.Wait()
		_ = os.RemoveAll(d.dir)
		Live.Add(-1)
	})
	return nil
}
