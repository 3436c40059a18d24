package dockeroverlay_test

import (
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/netmode/overlaytest"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

// TestLab is the standard integration test: every placement with tcp_rr,
// tcp_stream and udp_rr over a real etcd, and nothing left behind.
func TestLab(t *testing.T) { labtest.Mode(t, "docker-overlay") }

// TestLabStatic runs without the control plane (static mappings).
func TestLabStatic(t *testing.T) {
	overlaytest.Mode(t, "docker-overlay", map[string]string{"controlplane": "off"})
}

func TestGolden(t *testing.T) {
	for _, c := range []struct {
		file string
		opts map[string]string
	}{
		{"docker-overlay", nil},
		{"docker-overlay-static", map[string]string{"controlplane": "off"}},
	} {
		t.Run(c.file, func(t *testing.T) { overlaytest.Golden(t, "docker-overlay", c.opts, c.file) })
	}
}
