// Package labhold is `cnperf lab`: one network built in a local lab and
// kept up, so that any tool (iperf3, sockperf, tcpdump, ping) can be run
// on the very path cnperf measures.
package labhold

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/backend/labbackend"
	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
)

// Options are `cnperf lab`'s: the network, its placements (none: every
// one it allows), the underlay MTU, how long to hold it (0: until ctx
// ends), the agent's argv, where to print.
type Options struct {
	Network    string
	Placements []string
	MTU        int
	For        time.Duration
	Agent      []string
	Out, Log   io.Writer
}

// check refuses bad options (bad usage) before anything is built.
func (o Options) check() (netmode.Mode, []ground.Placement, error) {
	m, err := netmode.Get(o.Network)
	if err != nil {
		return nil, nil, err
	}
	pls := m.Placements()
	if len(o.Placements) > 0 {
		pls = nil
		for _, s := range o.Placements {
			p, err := ground.ParsePlacement(s)
			if err != nil {
				return nil, nil, err
			}
			if ok, why := netmode.Allows(m, p); !ok {
				return nil, nil, fmt.Errorf("%s cannot run %s: %s", m.Name(), p, why)
			}
			pls = append(pls, p)
		}
	}
	if o.For < 0 {
		return nil, nil, fmt.Errorf("--for %v; use a positive duration such as 10m, or leave it out to hold until Ctrl-C", o.For)
	}
	return m, pls, nil
}

// Hold builds the network and keeps it up until ctx ends or For has
// passed; it prints how to use it and writes every command that built it
// to the lab's commands.log.
func Hold(ctx context.Context, o Options) error {
	m, pls, err := o.check()
	if err != nil {
		return exitcode.With(err, exitcode.Usage)
	}
	if err := lab.Preflight(); err != nil {
		return err
	}
	if err := netmode.Check(m); err != nil {
		return err
	}
	be := labbackend.New(lab.Config{MTU: o.MTU}, o.Agent, func(f string, a ...any) { fmt.Fprintf(o.Log, f+"\n", a...) })
	topo, prs := pairs.Topology(m.Name(), pls, -1, -1)
	d, err := be.DeployLab(ctx, topo)
	if err != nil {
		return err
	}
	defer d.Teardown()
	fmt.Fprintf(o.Out, "%s is up (lab %s). Run any tool on its paths, e.g.:\n", m.Name(), d.Lab.ID)
	for _, pr := range prs {
		c, s := d.LabPod(pr.Client), d.LabPod(pr.Server)
		fmt.Fprintf(o.Out, "\n  %s: client pod %s (%s), server pod %s (%s)\n", pr.Placement, c.NetNS, c.IP, s.NetNS, s.IP)
		dial := s.IP.String()
		if c.NetNS == s.NetNS {
			dial = "127.0.0.1"
		}
		fmt.Fprintf(o.Out, "    ip netns exec %s iperf3 -s -1 &\n", s.NetNS)
		fmt.Fprintf(o.Out, "    ip netns exec %s iperf3 -c %s\n", c.NetNS, dial)
	}
	fmt.Fprintf(o.Out, "\nEvery command that built it: %s/commands.log\n", d.Lab.Dir)
	if err := os.WriteFile(d.Lab.Dir+"/commands.log", []byte(strings.Join(d.Lab.Commands(), "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if o.For > 0 {
		fmt.Fprintf(o.Out, "Tearing down in %v (or on Ctrl-C).\n", o.For)
		select {
		case <-ctx.Done():
		case <-time.After(o.For):
		}
	} else {
		fmt.Fprintln(o.Out, "Ctrl-C tears it down.")
		<-ctx.Done()
	}
	return nil
}
