package netmode_test

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/netmode"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/option"
)

func TestValidateOptions(t *testing.T) {
	cases := []struct {
		mode string
		set  map[string]string
		want string // "" = valid; else a substring of the error
	}{
		{"host-gw", nil, ""},
		{"host-gw", map[string]string{"underlay": "routed"}, ""},
		{"host-gw", map[string]string{"bogus": "1"}, `network host-gw has no option "bogus"; its options are underlay`},
		{"vxlan", map[string]string{"encrypt": "aes-gcm"}, `network vxlan has no option "encrypt"`},
		{"vxlan", map[string]string{"underlay": "star"}, "want one of switched, routed"},
		{"weave", map[string]string{"encrypt": "aes-gcm", "password": "x", "sockbuf": "4194304"}, ""},
		{"weave", map[string]string{"encrypt": "rot13"}, "want one of none, aes-gcm"},
		{"weave", map[string]string{"sockbuf": "big"}, "want a whole number"},
		{"calico-bgp", map[string]string{"bgp": "rr", "bgp-timeout": "5s", "block": "32", "controlplane": "off"}, ""},
		{"calico-bgp", map[string]string{"bgp": "ibgp"}, "want one of mesh, rr"},
		{"calico-bgp", map[string]string{"bgp-timeout": "soon"}, "want a duration"},
		{"calico-bgp", map[string]string{"encrypt": "aes-gcm"}, "its options are underlay, bgp, bgp-timeout, block, controlplane"},
		{"docker-overlay", map[string]string{"controlplane": "off"}, ""},
		{"docker-overlay", map[string]string{"controlplane": "consul"}, "want one of etcd, on, off, static"},
		{"flannel-udp", map[string]string{"controlplane": "etcd", "sockbuf": "1048576"}, ""},
		{"flannel-udp", map[string]string{"bgp": "rr"}, `network flannel-udp has no option "bgp"`},
		{"cloud-routed", map[string]string{"route-limit": "3", "underlay": "routed"}, ""},
		{"cloud-routed", map[string]string{"route-limit": "many"}, "want a whole number"},
		{"ebpf", map[string]string{"controlplane": "off"}, `network ebpf has no option "controlplane"`},
	}
	for _, c := range cases {
		m, err := netmode.Get(c.mode)
		if err != nil {
			t.Fatal(err)
		}
		err = netmode.ValidateOptions(m, c.set)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %v: %v", c.mode, c.set, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %v: got %v, want %q", c.mode, c.set, err, c.want)
		}
	}
}

// Every mode's declaration is well formed: named, helped, no key twice
// (nor one of the Common keys again), enums with values, defaults valid.
func TestOptionDeclarations(t *testing.T) {
	for _, n := range netmode.Names() {
		m, _ := netmode.Get(n)
		seen := map[string]bool{}
		for _, s := range append(append([]option.Spec(nil), netmode.Common...), m.Options()...) {
			switch {
			case s.Name == "" || s.Help == "":
				t.Errorf("%s: option %+v lacks a name or help", n, s)
			case seen[s.Name]:
				t.Errorf("%s: option %s declared twice", n, s.Name)
			case s.Kind == option.Enum && len(s.Values) == 0:
				t.Errorf("%s: enum %s without values", n, s.Name)
			}
			seen[s.Name] = true
			if s.Default != "" {
				if err := s.Check(s.Default); err != nil {
					t.Errorf("%s: default of %s: %v", n, s.Name, err)
				}
			}
		}
		if got := netmode.OptionsOf(m); len(got) != len(seen) {
			t.Errorf("%s: OptionsOf has %d options, want %d", n, len(got), len(seen))
		}
	}
}
