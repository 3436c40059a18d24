package gre

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
	if _, err := (Mode{}).AddPod(ctx, l, l.Hosts[1], "s2"); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "commands", rec.Text())
}

func TestMissingKernelOption(t *testing.T) {
	k := netmode.ParseKernelConfig(strings.NewReader("CONFIG_BRIDGE=y\n# CONFIG_NET_IPGRE_DEMUX is not set\n"))
	err := netmode.CheckWith(Mode{}, k, func(string) (string, error) { return "/usr/sbin/ip", nil })
	if err == nil || !strings.Contains(err.Error(), "CONFIG_NET_IPGRE") || !strings.Contains(err.Error(), "lacks") {
		t.Fatalf("check: %v, want it to name CONFIG_NET_IPGRE", err)
	}
}

func TestEndToEnd(t *testing.T) {
	labrun.Run(t, "gre", labrun.Options{})
}
