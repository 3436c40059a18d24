package main

import (
	"fmt"
	"os"
	"time"

	"github.com/cnperf/cnperf/internal/backend/labbackend"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
)

// cmdLab builds one network and keeps it up, so that any tool (iperf3,
// sockperf, tcpdump, ping) can be run on the very path cnperf measures.
func cmdLab(args []string) error {
	fs := newFlags("lab")
	network := fs.String("network", "vxlan", "the network to build")
	placement := fs.String("placement", "", "comma-separated placements (default: every one the network allows)")
	mtu := fs.Int("mtu", 1500, "underlay MTU")
	hold := fs.Duration("for", 0, "tear down after this long (default: on Ctrl-C)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m, err := netmode.Get(*network)
	if err != nil {
		return err
	}
	pls := m.Placements()
	if *placement != "" {
		pls = nil
		for _, s := range splitList(*placement) {
			p, err := netmode.ParsePlacement(s)
			if err != nil {
				return err
			}
			if ok, why := netmode.Allows(m, p); !ok {
				return fmt.Errorf("%s cannot run %s: %s", m.Name(), p, why)
			}
			pls = append(pls, p)
		}
	}
	if *hold < 0 {
		return fmt.Errorf("--for %v; use a positive duration such as 10m, or leave it out to hold until Ctrl-C", *hold)
	}
	if err := preflight(); err != nil {
		return err
	}
	if err := netmode.Check(m); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	be := labbackend.New(lab.Config{MTU: *mtu}, []string{self, "agent"}, func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) })
	topo, prs := pairs.Topology(m.Name(), pls, -1, -1)
	d, err := be.DeployLab(ctx, topo)
	if err != nil {
		return err
	}
	defer d.Teardown()
	fmt.Printf("%s is up (lab %s). Run any tool on its paths, e.g.:\n", m.Name(), d.Lab.ID)
	for _, pr := range prs {
		c, s := d.LabPod(pr.Client), d.LabPod(pr.Server)
		fmt.Printf("\n  %s: client pod %s (%s), server pod %s (%s)\n", pr.Placement, c.NetNS, c.IP, s.NetNS, s.IP)
		dial := s.IP.String()
		if c.NetNS == s.NetNS {
			dial = "127.0.0.1"
		}
		fmt.Printf("    ip netns exec %s iperf3 -s -1 &\n", s.NetNS)
		fmt.Printf("    ip netns exec %s iperf3 -c %s\n", c.NetNS, dial)
	}
	fmt.Printf("\nEvery command that built it: %s/commands.log\n", d.Lab.Dir)
	if err := os.WriteFile(d.Lab.Dir+"/commands.log", []byte(joinLines(d.Lab.Commands())), 0o644); err != nil {
		return err
	}
	if *hold > 0 {
		fmt.Printf("Tearing down in %v (or on Ctrl-C).\n", *hold)
		select {
		case <-ctx.Done():
		case <-time.After(*hold):
		}
	} else {
		fmt.Println("Ctrl-C tears it down.")
		<-ctx.Done()
	}
	return nil
}

func joinLines(ls []string) string {
	s := ""
	for _, l := range ls {
		s += l + "\n"
	}
	return s
}
