package svc_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/svc"
	_ "github.com/cnperf/cnperf/internal/svc/all"
)

func TestValidate(t *testing.T) {
	vip := netip.MustParseAddr("10.96.0.10")
	ep := []svc.Endpoint{{IP: netip.MustParseAddr("10.244.1.2"), Port: 8080}}
	ok := svc.Service{Name: "a", VIP: vip, Port: 80, Proto: "tcp", Endpoints: ep}
	cases := []struct {
		name string
		in   []svc.Service
		want string // "" for valid
	}{
		{"valid", []svc.Service{ok}, ""},
		{"no endpoints is valid", []svc.Service{{Name: "a", VIP: vip, Port: 80, Proto: "tcp"}}, ""},
		{"port clash", []svc.Service{ok, {Name: "b", VIP: vip, Port: 80, Proto: "tcp"}}, "port clash"},
		{"same port other proto", []svc.Service{ok, {Name: "b", VIP: vip, Port: 80, Proto: "udp"}}, ""},
		{"outside range", []svc.Service{{Name: "a", VIP: netip.MustParseAddr("10.244.0.5"), Port: 80, Proto: "tcp"}}, "outside the service range"},
		{"bad port", []svc.Service{{Name: "a", VIP: vip, Port: 0, Proto: "tcp"}}, "port 0"},
		{"bad proto", []svc.Service{{Name: "a", VIP: vip, Port: 80, Proto: "sctp"}}, "protocol"},
		{"twice", []svc.Service{ok, ok}, "defined twice"},
		{"no name", []svc.Service{{VIP: vip, Port: 80, Proto: "tcp"}}, "no name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := svc.Validate(c.in)
			if c.want == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

func TestVIP(t *testing.T) {
	a, err := svc.VIP(0)
	if err != nil || a.String() != "10.96.0.10" {
		t.Errorf("VIP(0) = %v, %v", a, err)
	}
	b, _ := svc.VIP(10000)
	if !svc.ServiceCIDR.Contains(b) || b.String() != "10.96.39.26" {
		t.Errorf("VIP(10000) = %v", b)
	}
	if _, err := svc.VIP(1 << 21); err == nil {
		t.Error("a VIP past the range was handed out")
	}
}

func TestRegistry(t *testing.T) {
	want := []string{"ebpf-socket", "ebpf-tc", "iptables", "ipvs", "nftables"}
	if got := strings.Join(svc.Names(), ","); got != strings.Join(want, ",") {
		t.Errorf("load balancers %s, want %s", got, strings.Join(want, ","))
	}
	_, err := svc.New("kube-router")
	if err == nil || !strings.Contains(err.Error(), "unknown load balancer") || !strings.Contains(err.Error(), "iptables") {
		t.Errorf("unknown balancer: %v", err)
	}
	a, _ := svc.New("iptables")
	b, _ := svc.New("iptables")
	if a == b {
		t.Error("New returned a shared instance; balancers hold state")
	}
}

func TestUnsupported(t *testing.T) {
	err := svc.Unsupported("needs %s", "X")
	if !errors.Is(err, svc.ErrUnsupported) || err.Error() != "needs X" {
		t.Errorf("%v", err)
	}
}

func TestValidateOptions(t *testing.T) {
	cases := []struct {
		lb   string
		set  map[string]string
		want string // "" = valid; else a substring of the error
	}{
		{"iptables", nil, ""},
		{"ipvs", map[string]string{}, ""},
		{"ipvs", map[string]string{"scheduler": "rr"}, `load balancer ipvs takes no option "scheduler" (it has no options)`},
		{"ebpf-socket", map[string]string{"x": "1"}, "has no options"},
	}
	for _, c := range cases {
		lb, err := svc.New(c.lb)
		if err != nil {
			t.Fatal(err)
		}
		err = svc.ValidateOptions(lb, c.set)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %v: %v", c.lb, c.set, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %v: got %v, want %q", c.lb, c.set, err, c.want)
		}
	}
}
