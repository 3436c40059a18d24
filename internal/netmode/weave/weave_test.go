package weave_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/tund"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func useBuiltCnperf(t *testing.T) {
	labtest.NeedRoot(t)
	tund.Binary = labtest.AgentBinary(t)
	t.Cleanup(func() { tund.Binary = "" })
}

// TestLab is the standard integration test, unencrypted.
func TestLab(t *testing.T) {
	useBuiltCnperf(t)
	labrun.Mode(t, "weave")
}

// TestLabEncrypted seals the tunnel with AES-GCM.
func TestLabEncrypted(t *testing.T) {
	useBuiltCnperf(t)
	labrun.Run(t, "weave", labrun.Options{Lab: lab.Config{ModeOptions: map[string]string{"encrypt": "aes-gcm"}}})
}

func TestGolden(t *testing.T) {
	tund.Binary = "cnperf"
	t.Cleanup(func() { tund.Binary = "" })
	for _, c := range []struct {
		file string
		opts map[string]string
	}{
		{"weave", nil},
		{"weave-encrypted", map[string]string{"encrypt": "aes-gcm"}},
	} {
		t.Run(c.file, func(t *testing.T) { labtest.GoldenWith(t, "weave", c.opts, c.file) })
	}
}

// TestDaemonFails: a router that cannot start fails Setup with its log,
// and nothing of the lab survives.
func TestDaemonFails(t *testing.T) {
	labtest.NeedRoot(t)
	tund.Binary = "/nonexistent/cnperf"
	t.Cleanup(func() { tund.Binary = "" })
	plan := labrun.Plan(t, []plan.Case{{Network: "weave", Placement: ground.CrossHost}}, "tcp_rr")
	err := runner.Execute(context.Background(), plan, &result.Run{Environment: result.CaptureHost()})
	labtest.AssertClean(t, plan.Lab.ID)
	if err == nil || !strings.Contains(err.Error(), "weave-h1 exited") {
		t.Fatalf("err = %v, want the router's exit", err)
	}
}

func TestBadOption(t *testing.T) {
	err := labtest.SetupError(t, "weave", map[string]string{"encrypt": "rot13"})
	if err == nil || !strings.Contains(err.Error(), "use none or aes-gcm") {
		t.Fatalf("err = %v", err)
	}
}
