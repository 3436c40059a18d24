package dockeroverlay_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/ctrlplane/etcd"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

// TestLab is the standard integration test: every placement with tcp_rr,
// tcp_stream and udp_rr over a real etcd, and nothing left behind.
func TestLab(t *testing.T) { labrun.Mode(t, "docker-overlay") }

// TestLabStatic runs without the control plane (static mappings).
func TestLabStatic(t *testing.T) {
	labrun.Run(t, "docker-overlay", labrun.Options{Lab: lab.Config{ModeOptions: map[string]string{"controlplane": "off"}}})
}

func TestGolden(t *testing.T) {
	for _, c := range []struct {
		file string
		opts map[string]string
	}{
		{"docker-overlay", nil},
		{"docker-overlay-static", map[string]string{"controlplane": "off"}},
	} {
		t.Run(c.file, func(t *testing.T) { labtest.GoldenWith(t, "docker-overlay", c.opts, c.file) })
	}
}

// TestMissingEtcd: without etcd the run fails saying what to install, and
// the half-built lab is gone.
func TestMissingEtcd(t *testing.T) {
	labtest.NeedRoot(t)
	old := etcd.LookPath
	etcd.LookPath = func(string) (string, error) { return "", exec.ErrNotFound }
	t.Cleanup(func() { etcd.LookPath = old })
	plan := labrun.Plan(t, []plan.Case{{Network: "docker-overlay", Placement: ground.CrossHost}}, "tcp_rr")
	err := runner.Execute(context.Background(), plan, &result.Run{Environment: result.CaptureHost()})
	labtest.AssertClean(t, plan.Lab.ID)
	if !errors.Is(err, etcd.ErrNoEtcd) || !strings.Contains(err.Error(), "apt-get install etcd-server") || !strings.Contains(err.Error(), "controlplane=off") {
		t.Fatalf("err = %v, want ErrNoEtcd naming the package and the way around it", err)
	}
}
