package calicoipip

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
	if _, err := (Mode{}).AddPod(ctx, l, l.Hosts[0], "c1"); err != nil {
		t.Fatal(err)
	}
	want := `ip -n cnperf-x-h1 route add 169.254.1.1/32 dev eth0 scope link
ip -n cnperf-x-h1 link show tunl0
ip -n cnperf-x-h1 link set tunl0 mtu 1480 up
ip -n cnperf-x-h1 addr add 10.244.1.0/32 dev tunl0
ip -n cnperf-x-h1 route add blackhole 10.244.1.0/24
ip -n cnperf-x-h1 route add 10.244.2.0/24 via 10.100.0.2 dev tunl0 onlink
ip -n cnperf-x-h2 route add 169.254.1.1/32 dev eth0 scope link
ip -n cnperf-x-h2 link show tunl0
ip -n cnperf-x-h2 link set tunl0 mtu 1480 up
ip -n cnperf-x-h2 addr add 10.244.2.0/32 dev tunl0
ip -n cnperf-x-h2 route add blackhole 10.244.2.0/24
ip -n cnperf-x-h2 route add 10.244.1.0/24 via 10.100.0.1 dev tunl0 onlink
ip netns add cnperf-x-h1-c1
ip -n cnperf-x-h1-c1 link set lo up
ip -n cnperf-x-h1 link add calic1 mtu 1480 type veth peer name eth0 mtu 1480 netns cnperf-x-h1-c1
ip netns exec cnperf-x-h1 sysctl -q -w net.ipv4.conf.calic1.proxy_arp=1
ip netns exec cnperf-x-h1 sysctl -q -w net.ipv4.neigh.calic1.proxy_delay=0
ip -n cnperf-x-h1 link set calic1 up
ip -n cnperf-x-h1 route add 10.244.1.2/32 dev calic1 scope link
ip -n cnperf-x-h1-c1 addr add 10.244.1.2/32 dev eth0
ip -n cnperf-x-h1-c1 link set eth0 up
ip -n cnperf-x-h1-c1 route add default via 169.254.1.1 dev eth0 onlink
`
	if got := rec.Text(); got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
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
	labtest.Run(t, "calico-ipip", labtest.Options{})
}
