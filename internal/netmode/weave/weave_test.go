package weave_test

import (
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/netmode/overlaytest"
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
	labtest.Mode(t, "weave")
}

// TestLabEncrypted seals the tunnel with AES-GCM.
func TestLabEncrypted(t *testing.T) {
	useBuiltCnperf(t)
	overlaytest.Mode(t, "weave", map[string]string{"encrypt": "aes-gcm"})
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
		t.Run(c.file, func(t *testing.T) { overlaytest.Golden(t, "weave", c.opts, c.file) })
	}
}
