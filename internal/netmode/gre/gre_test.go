package gre

import (
	"context"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
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
	want := `ip -n cnperf-x-h1 link add cni0 mtu 1476 type bridge
ip -n cnperf-x-h1 addr add 10.244.1.1/24 dev cni0
ip -n cnperf-x-h1 link set cni0 up
ip -n cnperf-x-h1 link add gre-h2 type gre local 10.100.0.1 remote 10.100.0.2 ttl 64
ip -n cnperf-x-h1 link set gre-h2 mtu 1476 up
ip -n cnperf-x-h1 route add 10.244.2.0/24 dev gre-h2
ip -n cnperf-x-h2 link add cni0 mtu 1476 type bridge
ip -n cnperf-x-h2 addr add 10.244.2.1/24 dev cni0
ip -n cnperf-x-h2 link set cni0 up
ip -n cnperf-x-h2 link add gre-h1 type gre local 10.100.0.2 remote 10.100.0.1 ttl 64
ip -n cnperf-x-h2 link set gre-h1 mtu 1476 up
ip -n cnperf-x-h2 route add 10.244.1.0/24 dev gre-h1
ip netns add cnperf-x-h2-s2
ip -n cnperf-x-h2-s2 link set lo up
ip -n cnperf-x-h2 link add veths2 mtu 1476 type veth peer name eth0 mtu 1476 netns cnperf-x-h2-s2
ip -n cnperf-x-h2 link set veths2 master cni0 up
ip -n cnperf-x-h2-s2 addr add 10.244.2.2/24 dev eth0
ip -n cnperf-x-h2-s2 link set eth0 up
ip -n cnperf-x-h2-s2 route add default via 10.244.2.1
`
	if got := rec.Text(); got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
}

func TestMissingKernelOption(t *testing.T) {
	k := netmode.ParseKernelConfig(strings.NewReader("CONFIG_BRIDGE=y\n# CONFIG_NET_IPGRE_DEMUX is not set\n"))
	err := netmode.CheckWith(Mode{}, k, func(string) (string, error) { return "/usr/sbin/ip", nil })
	if err == nil || !strings.Contains(err.Error(), "CONFIG_NET_IPGRE") || !strings.Contains(err.Error(), "lacks") {
		t.Fatalf("check: %v, want it to name CONFIG_NET_IPGRE", err)
	}
}

func TestEndToEnd(t *testing.T) {
	labtest.Run(t, "gre", labtest.Options{})
}
