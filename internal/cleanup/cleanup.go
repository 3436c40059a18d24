// Package cleanup is how `cnperf clean` removes what dead runs left
// behind. Every backend answers through one Cleaner (the lab's namespaces
// and state folders, the Docker engine's labelled containers, a cluster's
// labelled namespaces); what a run leaves on the host outside its
// namespaces (an experiment's cgroups, a load balancer's) registers a
// Cleaner of its own, asked for every run a backend removed. clean
// switches on no name: it asks whoever is registered.
package cleanup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/result"
)

// Request is what `cnperf clean` was asked.
type Request struct {
	// ID limits the cleaning to one run (and the labs beside its first);
	// "" is every dead run. A host-state Cleaner is always given the id of
	// one removed run.
	ID string
	// Force also removes the leftovers of runs that are still going.
	Force bool
	// Flags are the values of the backend's own flags clean takes
	// (--kubeconfig...), by name.
	Flags map[string]string
	// Out receives one line per run removed or kept.
	Out io.Writer
}

// Cleaner removes what dead runs left. It returns the ids of the runs it
// removed, so that the host state they left is removed too.
type Cleaner interface {
	Clean(ctx context.Context, req Request) (removed []string, err error)
}

var (
	mu   sync.Mutex
	host = map[string]Cleaner{}
)

// RegisterHostState adds a Cleaner for what a run leaves on the host
// outside its namespaces (cgroups): it is asked, with Request.ID set, for
// every run a backend's Cleaner removed. A duplicate name panics.
func RegisterHostState(name string, c Cleaner) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := host[name]; dup {
		panic("cleanup: duplicate " + name)
	}
	host[name] = c
}

// HostState lists the names of the registered host-state cleaners.
func HostState() []string {
	mu.Lock()
	defer mu.Unlock()
	out := make([]string, 0, len(host))
	for n := range host {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Run asks c to clean, then every host-state Cleaner for each run c
// removed; it returns every error, joined.
func Run(ctx context.Context, c Cleaner, req Request) error {
	if req.Out == nil {
		req.Out = io.Discard
	}
	removed, err := c.Clean(ctx, req)
	errs := []error{err}
	for _, id := range removed {
		for _, name := range HostState() {
			mu.Lock()
			hc := host[name]
			mu.Unlock()
			one := req
			one.ID = id
			if _, err := hc.Clean(ctx, one); err != nil {
				errs = append(errs, fmt.Errorf("%s of run %s: %w", name, id, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Func is a host-state Cleaner from a function of the run id.
type Func func(id string) error

// Clean implements Cleaner.
func (f Func) Clean(_ context.Context, req Request) ([]string, error) { return nil, f(req.ID) }

// Labs cleans the local labs of dead runs: their processes, cgroups,
// namespaces and state folders (package lab). It needs root.
type Labs struct{}

// Clean implements Cleaner.
func (Labs) Clean(_ context.Context, req Request) ([]string, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("needs root to delete network namespaces; run it as root")
	}
	removed, err := lab.CleanRun(req.ID, req.Force)
	result.CleanStaleLocks() // runs killed with -9: their results locks, held by no one
	var ids []string
	for _, r := range removed {
		fmt.Fprintf(req.Out, "removed run %s: %d namespaces\n", r.ID, len(r.Namespaces))
		ids = append(ids, r.ID)
	}
	left, _ := lab.FindLeftovers()
	for _, l := range left {
		if l.Live {
			fmt.Fprintf(req.Out, "kept run %s: still running (use --force to remove it)\n", l.ID)
		}
	}
	if len(removed) == 0 && err == nil {
		fmt.Fprintln(req.Out, "nothing to clean")
	}
	return ids, err
}
