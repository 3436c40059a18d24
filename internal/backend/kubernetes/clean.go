package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Leftover is one run's namespaces found on the cluster.
type Leftover struct {
	Run        string
	Namespaces []string
	Live       bool // its coordinator still runs on this machine, or another machine's
}

// Clean deletes the namespaces of dead runs (of every run with force; only
// run id when not empty), found by their cnperf.run label, and waits until
// they are gone. A run is dead when its coordinator's pid is gone from
// this machine; a run started from another machine is kept unless forced.
func Clean(ctx context.Context, cl *Clients, id string, force bool) (removed, kept []Leftover, err error) {
	nl, err := cl.Core.Namespaces().List(ctx, metav1.ListOptions{LabelSelector: LabelRun})
	if err != nil {
		return nil, nil, cl.explain(err, "list namespaces")
	}
	host, _ := os.Hostname()
	runs := map[string]*Leftover{}
	for _, ns := range nl.Items {
		r := ns.Labels[LabelRun]
		lo := runs[r]
		if lo == nil {
			lo = &Leftover{Run: r}
			runs[r] = lo
		}
		lo.Namespaces = append(lo.Namespaces, ns.Name)
		if ns.Annotations[AnnotHost] != host {
			lo.Live = true // cannot tell: another machine's
		} else if pid, err := strconv.Atoi(ns.Annotations[AnnotPID]); err == nil && pid > 0 && syscall.Kill(pid, 0) == nil {
			lo.Live = true
		}
	}
	names := make([]string, 0, len(runs))
	for r := range runs {
		names = append(names, r)
	}
	sort.Strings(names)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, r := range names {
		lo := runs[r]
		if id != "" && r != id {
			continue
		}
		if lo.Live && !force {
			kept = append(kept, *lo)
			continue
		}
		removed = append(removed, *lo)
		for _, ns := range lo.Namespaces {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := deleteNamespace(ctx, cl, ns, 500*time.Millisecond); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("run %s: %w", r, err))
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	return removed, kept, errors.Join(errs...)
}
