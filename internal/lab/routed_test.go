package lab

import (
	"context"
	"net/netip"
	"strings"
	"testing"
)

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func TestSwitchedCommands(t *testing.T) {
	// the default topology, command for command: modes and golden tests
	// elsewhere depend on it
	rec := &Recorder{}
	l, err := New(Config{ID: "x", Exec: rec, NoStateDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := `ip netns add cnperf-x-sw
ip -n cnperf-x-sw link set lo up
ip -n cnperf-x-sw link add br0 mtu 1500 type bridge
ip -n cnperf-x-sw link set br0 up
ip netns exec cnperf-x-sw sysctl -q -e -w net.bridge.bridge-nf-call-iptables=0 net.bridge.bridge-nf-call-ip6tables=0 net.bridge.bridge-nf-call-arptables=0
ip netns add cnperf-x-h1
ip -n cnperf-x-h1 link set lo up
ip -n cnperf-x-sw link add h1 mtu 1500 type veth peer name eth0 mtu 1500 netns cnperf-x-h1
ip -n cnperf-x-sw link set h1 master br0 up
ip -n cnperf-x-h1 addr add 10.100.0.1/24 dev eth0
ip -n cnperf-x-h1 link set eth0 up
ip netns exec cnperf-x-h1 sysctl -q -w net.ipv4.ip_forward=1
ip netns add cnperf-x-h2
ip -n cnperf-x-h2 link set lo up
ip -n cnperf-x-sw link add h2 mtu 1500 type veth peer name eth0 mtu 1500 netns cnperf-x-h2
ip -n cnperf-x-sw link set h2 master br0 up
ip -n cnperf-x-h2 addr add 10.100.0.2/24 dev eth0
ip -n cnperf-x-h2 link set eth0 up
ip netns exec cnperf-x-h2 sysctl -q -w net.ipv4.ip_forward=1
`
	if got := rec.Text(); got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
	if l.Router != "" || l.Hosts[1].Gateway.IsValid() {
		t.Errorf("switched lab has router %q, gateway %v", l.Router, l.Hosts[1].Gateway)
	}
}

func TestRoutedCommands(t *testing.T) {
	for _, cfg := range []Config{
		{ID: "x", Routed: true},
		{ID: "x", ModeOptions: map[string]string{"underlay": "routed"}},
	} {
		rec := &Recorder{}
		cfg.Exec, cfg.NoStateDirs = rec, true
		l, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Create(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := `ip netns add cnperf-x-sw
ip -n cnperf-x-sw link set lo up
ip -n cnperf-x-sw link add br0 mtu 1500 type bridge
ip -n cnperf-x-sw link set br0 up
ip netns exec cnperf-x-sw sysctl -q -e -w net.bridge.bridge-nf-call-iptables=0 net.bridge.bridge-nf-call-ip6tables=0 net.bridge.bridge-nf-call-arptables=0
ip netns add cnperf-x-rt
ip -n cnperf-x-rt link set lo up
ip netns exec cnperf-x-rt sysctl -q -w net.ipv4.ip_forward=1
ip netns add cnperf-x-h1
ip -n cnperf-x-h1 link set lo up
ip -n cnperf-x-rt link add h1 mtu 1500 type veth peer name eth0 mtu 1500 netns cnperf-x-h1
ip -n cnperf-x-rt addr add 10.100.1.1/24 dev h1
ip -n cnperf-x-rt link set h1 up
ip -n cnperf-x-h1 addr add 10.100.1.2/24 dev eth0
ip -n cnperf-x-h1 link set eth0 up
ip -n cnperf-x-h1 route add default via 10.100.1.1
ip netns exec cnperf-x-h1 sysctl -q -w net.ipv4.ip_forward=1
ip netns add cnperf-x-h2
ip -n cnperf-x-h2 link set lo up
ip -n cnperf-x-rt link add h2 mtu 1500 type veth peer name eth0 mtu 1500 netns cnperf-x-h2
ip -n cnperf-x-rt addr add 10.100.2.1/24 dev h2
ip -n cnperf-x-rt link set h2 up
ip -n cnperf-x-h2 addr add 10.100.2.2/24 dev eth0
ip -n cnperf-x-h2 link set eth0 up
ip -n cnperf-x-h2 route add default via 10.100.2.1
ip netns exec cnperf-x-h2 sysctl -q -w net.ipv4.ip_forward=1
`
		if got := rec.Text(); got != want {
			t.Errorf("commands:\n%s\nwant:\n%s", got, want)
		}
		h1, h2 := l.Hosts[0], l.Hosts[1]
		if h1.Underlay.Contains(h2.IP) {
			t.Errorf("routed hosts share a subnet: %s holds %s", h1.Underlay, h2.IP)
		}
		if l.Router != "cnperf-x-rt" {
			t.Errorf("router %q", l.Router)
		}
	}
}

func TestRoutedValidate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{ModeOptions: map[string]string{"underlay": "mesh"}}, "use underlay=switched or underlay=routed"},
		{Config{Routed: true, Underlay: mustPrefix("10.244.0.0/24"), PodNet: mustPrefix("10.245.0.0/16")}, ""},
		{Config{ModeOptions: map[string]string{"underlay": "switched"}}, ""},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if tt.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", tt.cfg.ModeOptions, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.cfg.ModeOptions, err, tt.want)
		}
	}
}
