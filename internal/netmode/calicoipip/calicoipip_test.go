package calicoipip

import (
	"context"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	"github.com/cnperf/cnperf/internal/netmode"
)

func TestCommands(t *testing.T) {
	rec := &lab.Recorder{}
	l, err := lab.New(lab.Config{ID: "x", Exec: rec, NoStateDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := (Mode{}).Setup(ctx, l); err != nil {
		t.Fatal(err)
	}
	if _, err := (Mode{}).AddPod(ctx, l, l.Hosts[0], "c1"); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "commands", rec.Text())
}

func TestMissingKernelOption(t *testing.T) {
	k := netmode.ParseKernelConfig(strings.NewReader("CONFIG_VETH=y\n# CONFIG_NET_IPIP is not set\n"))
	err := netmode.CheckWith(Mode{}, k, func(string) (string, error) { return "/usr/sbin/ip", nil })
	if err == nil || !strings.Contains(err.Error(), "CONFIG_NET_IPIP") {
		t.Fatalf("check: %v, want it to name CONFIG_NET_IPIP", err)
	}
	k = netmode.ParseKernelConfig(strings.NewReader("CONFIG_VETH=y\nCONFIG_NET_IPIP=m\n"))
	if err := netmode.CheckWith(Mode{}, k, func(string) (string, error) { return "/usr/sbin/ip", nil }); err != nil {
		t.Fatalf("check with CONFIG_NET_IPIP=m: %v", err)
	}
}

// TestEndToEnd runs where the kernel has IP-in-IP, and skips with the
// missing option named elsewhere.
func TestEndToEnd(t *testing.T) {
	labrun.Run(t, "calico-ipip", labrun.Options{})
}
