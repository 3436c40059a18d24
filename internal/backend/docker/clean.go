package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/cnperf/cnperf/internal/dockerengine"
)

// Leftover is one run's objects found on the engine.
type Leftover struct {
	Run        string // the run id; "" for an agent image
	Image      string // an agent image removed
	Containers int
	Networks   int
	Live       bool // its coordinator still runs on this machine
}

// Clean removes the containers and networks of dead runs (every run with
// force; only run id when not empty), found by their cnperf.run label,
// and, without id, the agent images no container uses other than keep
// (the current binary's). A run is dead when its coordinator's pid is gone from this
// machine; a run started from another machine is kept unless forced.
func Clean(ctx context.Context, e *dockerengine.Engine, id, keep string, force bool) (removed, kept []Leftover, err error) {
	cs, err := e.Containers(ctx, dockerengine.LabelRun)
	if err != nil {
		return nil, nil, err
	}
	ns, err := e.Networks(ctx, dockerengine.LabelRun)
	if err != nil {
		return nil, nil, err
	}
	runs := map[string]*Leftover{}
	host, _ := os.Hostname()
	get := func(labels map[string]string) *Leftover {
		r := labels[dockerengine.LabelRun]
		lo := runs[r]
		if lo == nil {
			lo = &Leftover{Run: r}
			runs[r] = lo
		}
		if labels[dockerengine.LabelHost] != host {
			lo.Live = true // cannot tell: another machine's
		} else if pid, err := strconv.Atoi(labels[dockerengine.LabelPID]); err == nil && pid > 0 && syscall.Kill(pid, 0) == nil {
			lo.Live = true
		}
		return lo
	}
	for _, c := range cs {
		get(c.Labels).Containers++
	}
	for _, n := range ns {
		get(n.Labels).Networks++
	}
	var errs []error
	for _, r := range sortedKeys(runs) {
		lo := runs[r]
		if id != "" && r != id {
			continue
		}
		if lo.Live && !force {
			kept = append(kept, *lo)
			continue
		}
		if err := dockerengine.RemoveLabelled(ctx, e, dockerengine.LabelRun+"="+r); err != nil {
			errs = append(errs, fmt.Errorf("run %s: %w", r, err))
			continue
		}
		dirs, _ := filepath.Glob(filepath.Join(StateRoot, r+"*"))
		for _, d := range dirs {
			if base := filepath.Base(d); base == r || strings.HasPrefix(base, r+"s") {
				_ = os.RemoveAll(d)
			}
		}
		removed = append(removed, *lo)
	}
	_ = os.Remove(StateRoot)
	if id != "" { // one run's leftovers only
		return removed, kept, errors.Join(errs...)
	}
	imgs, err := e.Images(ctx, dockerengine.LabelAgent)
	if err != nil {
		return removed, kept, errors.Join(append(errs, err)...)
	}
	for _, im := range imgs {
		if contains(im.RepoTags, keep) {
			continue
		}
		inUse, err := e.Containers(ctx, dockerengine.LabelRun)
		if err == nil && imageUsed(ctx, e, inUse, im.ID) {
			continue
		}
		if err := e.RemoveImage(ctx, im.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		name := im.ID
		if len(im.RepoTags) > 0 {
			name = im.RepoTags[0]
		}
		removed = append(removed, Leftover{Image: name})
	}
	return removed, kept, errors.Join(errs...)
}

func imageUsed(ctx context.Context, e *dockerengine.Engine, cs []dockerengine.ContainerSummary, id string) bool {
	for _, c := range cs {
		if v, err := e.InspectContainer(ctx, c.ID); err == nil && v.Image == id {
			return true
		}
	}
	return false
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedKeysOf(s []string) []string {
	sort.Strings(s)
	return s
}

// proxyServes says whether a docker-proxy process serves host port port.
func proxyServes(port int) bool { return len(proxyPIDs([]int{port})) > 0 }

// proxyPIDs are the docker-proxy processes serving any of host ports.
func proxyPIDs(ports []int) []int {
	want := map[string]bool{}
	for _, p := range ports {
		want[strconv.Itoa(p)] = true
	}
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, en := range ents {
		if _, err := strconv.Atoi(en.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + en.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(b), "docker-proxy") {
			continue
		}
		args := strings.Split(string(b), "\x00")
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-host-port" && want[args[i+1]] {
				pid, _ := strconv.Atoi(en.Name())
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// daemonSettings reads the local dockerd's network settings from its
// command line and daemon.json: userland-proxy, iptables, mtu.
func daemonSettings() map[string]string {
	m := map[string]string{"userland_proxy": "true", "iptables": "true"} // dockerd's defaults
	ents, _ := os.ReadDir("/proc")
	cfgFile := "/etc/docker/daemon.json"
	var args []string
	for _, en := range ents {
		if _, err := strconv.Atoi(en.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + en.Name() + "/cmdline")
		if err != nil {
			continue
		}
		a := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if filepath.Base(a[0]) == "dockerd" {
			args = a[1:]
			break
		}
	}
	if args == nil {
		m["dockerd"] = "not found on this machine"
	}
	for i, a := range args {
		k, v, hasV := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasV && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			v = args[i+1]
		}
		switch k {
		case "config-file":
			cfgFile = v
		case "userland-proxy", "iptables", "mtu":
			if !hasV && v == "" {
				v = "true"
			}
			m[strings.ReplaceAll(k, "-", "_")] = v
		}
	}
	if b, err := os.ReadFile(cfgFile); err == nil {
		var cfg map[string]any
		if json.Unmarshal(b, &cfg) == nil {
			for _, k := range []string{"userland-proxy", "iptables", "mtu", "storage-driver", "bridge"} {
				if v, ok := cfg[k]; ok {
					m[strings.ReplaceAll(k, "-", "_")] = fmt.Sprint(v)
				}
			}
		}
	}
	return m
}
