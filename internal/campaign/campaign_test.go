package campaign

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/netmode"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/svc"
	_ "github.com/cnperf/cnperf/internal/svc/all"
)

var (
	trials = flag.Int("campaign.trials", 6, "interrupted runs (50 by hand)")
	seed   = flag.Int64("campaign.seed", 0, "seed of the trials' choices (0: from the clock; logged either way)")
	window = flag.Duration("campaign.window", 14*time.Second, "each signal lands at a moment uniform in [0, window) after the run starts")
)

func TestMain(m *testing.M) { labtest.Main(m) }

// The mix: networks with a daemon (flannel-udp's tund, calico-bgp's BIRD),
// eBPF datapaths, tunnels, NAT; sometimes a ClusterIP load balancer.
var (
	networks   = []string{"bridge", "vxlan", "host-gw", "flannel-udp", "calico-bgp", "ebpf", "nat"}
	lbNetworks = []string{"host-gw", "vxlan", "calico-bgp"}
	lbs        = []string{"iptables", "nftables", "ebpf-socket"}
	signals    = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL}
)

type trial struct {
	n          int
	network    string
	lb         string // "" for none
	noBaseline bool
	sig        syscall.Signal
	delay      time.Duration
}

func (tr trial) String() string {
	lb := ""
	if tr.lb != "" {
		lb = " --lb " + tr.lb
	}
	return fmt.Sprintf("trial %d: %s%s, %v after %v", tr.n, tr.network, lb, tr.sig, tr.delay.Round(time.Millisecond))
}

func buildable(network string) bool {
	m, err := netmode.Get(network)
	return err == nil && netmode.Check(m) == nil
}

func lbAvailable(name string) bool {
	lb, err := svc.New(name)
	return err == nil && svc.Check(lb) == nil
}

// plan draws the trials from the seed: the same seed, the same campaign.
func plan(rng *rand.Rand, n int) []trial {
	var nets, lbNets, lbOK []string
	for _, n := range networks {
		if buildable(n) {
			nets = append(nets, n)
		}
	}
	for _, n := range lbNetworks {
		if buildable(n) {
			lbNets = append(lbNets, n)
		}
	}
	for _, l := range lbs {
		if lbAvailable(l) {
			lbOK = append(lbOK, l)
		}
	}
	var out []trial
	for i := 1; i <= n && len(nets) > 0; i++ {
		tr := trial{n: i, sig: signals[rng.Intn(len(signals))], delay: time.Duration(rng.Int63n(int64(*window)))}
		if len(lbOK) > 0 && len(lbNets) > 0 && rng.Intn(3) == 0 {
			tr.network, tr.lb = lbNets[rng.Intn(len(lbNets))], lbOK[rng.Intn(len(lbOK))]
		} else {
			tr.network = nets[rng.Intn(len(nets))]
			tr.noBaseline = rng.Intn(2) == 0
		}
		out = append(out, tr)
	}
	return out
}

// TestInterruptCampaign runs -campaign.trials cnperf runs, each cut by a
// random signal at a random moment, then `cnperf clean --id`, and asserts
// that nothing of the run is left and that its results file, if any, is
// true: no skip caused by the interruption, marked incomplete when cut.
// A run that a SIGINT or SIGTERM cut must also have torn itself down
// before the clean.
func TestInterruptCampaign(t *testing.T) {
	labtest.NeedRoot(t)
	bin := labtest.AgentBinary(t)
	s := *seed
	if s == 0 {
		s = time.Now().UnixNano()
	}
	t.Logf("campaign: %d trials, seed %d (re-run with -campaign.seed=%d)", *trials, s, s)
	rng := rand.New(rand.NewSource(s))
	trs := plan(rng, *trials)
	if len(trs) == 0 {
		t.Skip("this machine can build none of the campaign's networks: " + strings.Join(networks, ", "))
	}
	stats := map[string]int{}
	for _, tr := range trs {
		outcome := runTrial(t, bin, tr)
		stats[outcome]++
	}
	t.Logf("campaign outcomes: %v", stats)
}

func runTrial(t *testing.T, bin string, tr trial) (outcome string) {
	id := fmt.Sprintf("cp%d%x", tr.n, rand.Uint32()&0xffffff)
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	args := []string{"run", "--networks", tr.network, "--duration", "1s", "--repeat", "2", "--out", out}
	if tr.lb != "" {
		args = append(args, "--lb", tr.lb, "--workloads", "tcp_crr")
	} else {
		args = append(args, "--workloads", "tcp_rr,udp_stream")
	}
	if tr.noBaseline {
		args = append(args, "--no-baseline")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "CNPERF_RUN_ID="+id)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	sent := false
	var err error
	select {
	case err = <-done:
	case <-time.After(tr.delay):
		sent = cmd.Process.Signal(tr.sig) == nil
		select {
		case err = <-done:
		case <-time.After(3 * time.Minute):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("%v (lab %s): still running 3 minutes after the signal; killed\n%s", tr, id, stderr.String())
			return "hung"
		}
	}
	var ee *exec.ExitError
	cut := sent && err != nil
	switch {
	case err == nil:
		outcome = "finished before the signal"
		if sent {
			outcome = "finished as the signal came"
		}
	case errors.As(err, &ee) && sent:
		outcome = "cut by " + tr.sig.String()
	default:
		t.Errorf("%v (lab %s): failed on its own: %v\n%s", tr, id, err, stderr.String())
		outcome = "failed"
	}
	log := stderr.String()
	t.Logf("%v (lab %s): %s", tr, id, outcome)
	if strings.Contains(log, "panic:") || strings.Contains(log, "goroutine ") {
		t.Errorf("%v (lab %s): cnperf crashed:\n%s", tr, id, log)
	}
	if tr.sig != syscall.SIGKILL && cut {
		if left := Leftovers(id); len(left) > 0 {
			t.Errorf("%v (lab %s): the run did not tear itself down after %v: %s\n%s", tr, id, tr.sig, strings.Join(left, "; "), log)
		}
	}
	if cout, err := exec.Command(bin, "clean", "--id", id).CombinedOutput(); err != nil {
		t.Errorf("%v: cnperf clean --id %s: %v: %s", tr, id, err, cout)
	}
	if left := Leftovers(id); len(left) > 0 {
		t.Errorf("%v (lab %s): left after cnperf clean: %s\n%s", tr, id, strings.Join(left, "; "), log)
	}
	checkResults(t, tr, id, out, err == nil, log)
	if ents, _ := os.ReadDir(dir); len(ents) > 1 || (len(ents) == 1 && ents[0].Name() != "r.json") {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("%v (lab %s): left in the results folder: %v", tr, id, names)
	}
	return outcome
}

// falseSkip is how a skip that an interruption caused reads.
var falseSkip = []string{"context canceled", "interrupted", "signal", "killed", "deadline exceeded"}

// checkResults asserts the run's results file (if it wrote one) is true:
// no skip caused by the interruption, incomplete unless the run exited 0.
func checkResults(t *testing.T, tr trial, id, path string, exited0 bool, log string) {
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "skip ") {
			for _, w := range falseSkip {
				if strings.Contains(line, w) {
					t.Errorf("%v (lab %s): the interruption was reported as a skip: %s", tr, id, line)
				}
			}
		}
	}
	if _, err := os.Stat(path); err != nil {
		if exited0 {
			t.Errorf("%v (lab %s): exited 0 without a results file", tr, id)
		}
		return
	}
	run, err := result.Read(path)
	if err != nil {
		t.Errorf("%v (lab %s): results file unreadable: %v", tr, id, err)
		return
	}
	for _, s := range run.Skipped {
		for _, w := range falseSkip {
			if strings.Contains(s.Reason, w) {
				t.Errorf("%v (lab %s): a skip caused by the interruption in the results: %s: %s", tr, id, s.Network, s.Reason)
			}
		}
	}
	if !exited0 && !run.Incomplete {
		t.Errorf("%v (lab %s): a cut run's results are not marked incomplete", tr, id)
	}
	if exited0 && run.Incomplete {
		t.Errorf("%v (lab %s): a finished run's results are marked incomplete", tr, id)
	}
	if run.CellsDone > run.CellsPlanned {
		t.Errorf("%v (lab %s): %d of %d cells done", tr, id, run.CellsDone, run.CellsPlanned)
	}
}
