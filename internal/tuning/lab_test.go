package tuning_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/backend/labbackend"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/tuning"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// hostValue reads a sysctl in this process's namespace: the host's.
func hostValue(t *testing.T, key string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/")))
	if err != nil {
		return "(absent)"
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

func inNS(t *testing.T, ns string, argv ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// The study's profile sets its sysctls, NOTRACK and RPS inside every
// namespace of a tuned lab (hosts and pods), leaves an untuned lab beside
// it as built, and changes nothing in the host's own namespace.
func TestStudyInsideTheLabOnly(t *testing.T) {
	labtest.NeedRoot(t)
	keys := []string{"fs.file-max", "net.core.rps_sock_flow_entries", "kernel.sched_migration_cost_ns"}
	for _, kv := range tuning.Study.Sysctls {
		keys = append(keys, kv[0])
	}
	before := map[string]string{}
	for _, k := range keys {
		before[k] = hostValue(t, k)
	}
	hostRaw, _ := exec.Command("iptables-save", "-t", "raw").CombinedOutput()

	id := lab.NewID()
	b := labbackend.New(lab.Config{ID: id}, []string{labtest.AgentBinary(t), "agent"}, t.Logf)
	topo := backend.Topology{Network: "host-gw", Hosts: 2, Pods: []backend.PodSpec{{Name: "c1", Host: 1, CPU: -1}, {Name: "s2", Host: 2, CPU: -1}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	plain, err := b.DeployLab(ctx, topo)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Teardown()
	topo.Tuning = "study"
	tuned, err := b.DeployLab(ctx, topo)
	if err != nil {
		t.Fatal(err)
	}
	defer tuned.Teardown()

	if tuned.Tuned == nil || tuned.Tuned.Namespaces < 4 {
		t.Fatalf("tuning record %+v: want at least switch, 2 hosts and 2 pods", tuned.Tuned)
	}
	pods := []string{tuned.LabPod("c1").NetNS, tuned.LabPod("s2").NetNS, tuned.Lab.Hosts[0].NetNS, tuned.Lab.Hosts[1].NetNS}
	for _, ns := range pods {
		for _, kv := range tuning.Study.Sysctls {
			if got := inNS(t, ns, "sysctl", "-n", kv[0]); got != kv[1] {
				t.Errorf("%s in %s = %q, want %q", kv[0], ns, got, kv[1])
			}
		}
		if raw := inNS(t, ns, "iptables", "-t", "raw", "-S"); !strings.Contains(raw, "-A PREROUTING -j NOTRACK") || !strings.Contains(raw, "-A OUTPUT -j NOTRACK") {
			t.Errorf("%s: raw table %q, want NOTRACK in PREROUTING and OUTPUT", ns, raw)
		}
	}
	pod := tuned.LabPod("c1")
	q := "/sys/class/net/" + pod.Dev + "/queues/rx-0/"
	if got := inNS(t, pod.NetNS, "cat", q+"rps_flow_cnt"); got != "32768" {
		t.Errorf("rps_flow_cnt of %s in %s = %s, want 32768", pod.Dev, pod.NetNS, got)
	}
	if got := inNS(t, pod.NetNS, "cat", q+"rps_cpus"); strings.Trim(got, "0,") == "" {
		t.Errorf("rps_cpus of %s in %s = %s, want CPUs set", pod.Dev, pod.NetNS, got)
	}
	// the untuned lab beside it is as built
	ppod := plain.LabPod("c1").NetNS
	if got := inNS(t, ppod, "sysctl", "-n", "net.ipv4.tcp_fin_timeout"); got == "10" {
		t.Errorf("tcp_fin_timeout in the untuned lab's pod %s is the study's 10", ppod)
	}
	if raw := inNS(t, ppod, "iptables", "-t", "raw", "-S"); strings.Contains(raw, "NOTRACK") {
		t.Errorf("NOTRACK in the untuned lab's pod: %s", raw)
	}
	// and the host's own namespace is untouched
	for _, k := range keys {
		if after := hostValue(t, k); after != before[k] {
			t.Errorf("host %s changed: %q -> %q", k, before[k], after)
		}
	}
	if after, _ := exec.Command("iptables-save", "-t", "raw").CombinedOutput(); strings.Count(string(after), "NOTRACK") != strings.Count(string(hostRaw), "NOTRACK") {
		t.Errorf("the host's raw table changed:\n%s", after)
	}
	if !strings.Contains(strings.Join(tuned.Tuned.NotApplied, "\n"), "fs.file-max") {
		t.Errorf("fs.file-max not recorded as not applied: %v", tuned.Tuned.NotApplied)
	}
}

// A run with --tuning none,study measures every cell both ways, records
// the profile in the environment and compares tuned with untuned.
func TestTuningRun(t *testing.T) {
	labtest.NeedRoot(t)
	plan := labrun.Plan(t, []plan.Case{{Network: "baseline", Placement: ground.CrossHost}, {Network: "host-gw", Placement: ground.CrossHost}}, "tcp_rr")
	plan.Options = map[string]string{"tuning": "none,study"}
	plan.Repeat = 2
	plan.Log = testLog{t}
	run := &result.Run{Environment: result.CaptureHost()}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := runner.Execute(ctx, plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]int{}
	for _, r := range run.Results {
		labtest.CheckSane(t, r)
		steps[r.Network+" "+r.Step]++
		if strings.HasSuffix(r.Step, "tuning=study") && r.VsUntuned == nil {
			t.Errorf("%s %s round %d: no comparison with the untuned cell", r.Network, r.Step, r.Round)
		}
		if r.Params["tuning"] == nil {
			t.Errorf("%s %s: no tuning param", r.Network, r.Step)
		}
	}
	for _, s := range []string{"baseline tuning=none", "baseline tuning=study", "host-gw tuning=none", "host-gw tuning=study"} {
		if steps[s] != 2 {
			t.Errorf("%s: %d results, want 2 (one a round); all: %v", s, steps[s], steps)
		}
	}
	if len(run.Environment.Tunings) != 1 || run.Environment.Tunings[0].Profile != "study" || run.Environment.Tunings[0].Labs != 2 {
		t.Errorf("environment tunings %+v, want study over 2 labs (baseline and host-gw)", run.Environment.Tunings)
	}
}

type testLog struct{ t *testing.T }

func (w testLog) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
