package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/runner"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	plan := runner.Plan{Lab: lab.Config{MTU: *mtu}, Agent: []string{self, "agent"}, Log: os.Stderr}
	b, err := runner.Build(ctx, plan, m, pls)
	if err != nil {
		return err
	}
	defer b.Lab.Teardown()
	fmt.Printf("%s is up (lab %s). Run any tool on its paths, e.g.:\n", m.Name(), b.Lab.ID)
	for _, pi := range b.Info() {
		fmt.Printf("\n  %s: client pod %s (%s), server pod %s (%s)\n", pi.Placement, pi.ClientNS, pi.ClientIP, pi.ServerNS, pi.ServerIP)
		fmt.Printf("    ip netns exec %s iperf3 -s -1 &\n", pi.ServerNS)
		fmt.Printf("    ip netns exec %s iperf3 -c %s\n", pi.ClientNS, dialHint(pi))
	}
	fmt.Printf("\nEvery command that built it: %s/commands.log\n", b.Lab.Dir)
	if err := os.WriteFile(b.Lab.Dir+"/commands.log", []byte(joinLines(b.Lab.Commands())), 0o644); err != nil {
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

func dialHint(pi runner.PairInfo) string {
	if pi.ClientNS == pi.ServerNS {
		return "127.0.0.1"
	}
	return pi.ServerIP
}

func joinLines(ls []string) string {
	s := ""
	for _, l := range ls {
		s += l + "\n"
	}
	return s
}
