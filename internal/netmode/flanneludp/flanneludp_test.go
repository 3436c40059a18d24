package flanneludp_test

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/tund"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func useBuiltCnperf(t *testing.T) {
	labtest.NeedRoot(t)
	tund.Binary = labtest.AgentBinary(t)
	t.Cleanup(func() { tund.Binary = "" })
}

// TestLab is the standard integration test over leases in a real etcd.
func TestLab(t *testing.T) {
	useBuiltCnperf(t)
	labrun.Mode(t, "flannel-udp")
}

// TestLabStatic runs the daemons with static routes, no etcd.
func TestLabStatic(t *testing.T) {
	useBuiltCnperf(t)
	labrun.Run(t, "flannel-udp", labrun.Options{Lab: lab.Config{ModeOptions: map[string]string{"controlplane": "off"}}})
}

func TestGolden(t *testing.T) {
	tund.Binary = "cnperf"
	t.Cleanup(func() { tund.Binary = "" })
	for _, c := range []struct {
		file string
		opts map[string]string
	}{
		{"flannel-udp", nil},
		{"flannel-udp-static", map[string]string{"controlplane": "off"}},
	} {
		t.Run(c.file, func(t *testing.T) { labtest.GoldenWith(t, "flannel-udp", c.opts, c.file) })
	}
}

func TestBadOption(t *testing.T) {
	err := labtest.SetupError(t, "flannel-udp", map[string]string{"controlplane": "consul"})
	if err == nil || !strings.Contains(err.Error(), "use etcd or off") {
		t.Fatalf("err = %v", err)
	}
}
