package lab

import (
	"context"
	"net/netip"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" = valid
	}{
		{"defaults", Config{}, ""},
		{"mtu too small", Config{MTU: 100}, "MTU"},
		{"jumbo ok", Config{MTU: 9000}, ""},
		{"too many hosts", Config{Hosts: 500}, "hosts"},
		{"overlap", Config{Underlay: netip.MustParsePrefix("10.244.0.0/24")}, "overlaps"},
		{"tiny underlay", Config{Underlay: netip.MustParsePrefix("10.1.0.0/30")}, "/24 or shorter"},
		{"v6 pods", Config{PodNet: netip.MustParsePrefix("fd00::/16")}, "IPv4"},
		{"id up a folder", Config{ID: ".."}, "run id"},
		{"id with a dash", Config{ID: "ci-1"}, "run id"},
		{"id with a slash", Config{ID: "a/b"}, "run id"},
		{"host prefix with a dash", Config{HostPrefix: "n-"}, "host prefix"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if c.want == "" && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("error %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestAddressing(t *testing.T) {
	l, err := New(Config{Hosts: 3, ID: "abc", NoStateDirs: true, Exec: &Recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ ns, ip, pods string }{
		{"cnperf-abc-h1", "10.100.0.1", "10.244.1.0/24"},
		{"cnperf-abc-h2", "10.100.0.2", "10.244.2.0/24"},
		{"cnperf-abc-h3", "10.100.0.3", "10.244.3.0/24"},
	}
	for i, w := range want {
		h := l.Hosts[i]
		if h.NetNS != w.ns || h.IP.String() != w.ip || h.PodCIDR.String() != w.pods {
			t.Errorf("host %d = %s %s %s, want %v", i+1, h.NetNS, h.IP, h.PodCIDR, w)
		}
	}
	if l.Switch != "cnperf-abc-sw" {
		t.Errorf("switch %s", l.Switch)
	}
}

func TestPodIPAM(t *testing.T) {
	l, _ := New(Config{ID: "x", NoStateDirs: true, Exec: &Recorder{}})
	h := l.Hosts[0]
	first, _ := h.NextPodIP()
	second, _ := h.NextPodIP()
	if first.String() != "10.244.1.2" || second.String() != "10.244.1.3" {
		t.Fatalf("got %s, %s", first, second)
	}
	// .1 is the gateway, .255 broadcast: .2 to .254 are pods, 253 in all.
	got := 2
	var err error
	for {
		if _, err = h.NextPodIP(); err != nil {
			break
		}
		got++
	}
	if got != 253 || !strings.Contains(err.Error(), "full") {
		t.Fatalf("subnet full after %d pods, err %v", got, err)
	}
}

func TestTeardownRecordsDeletes(t *testing.T) {
	rec := &Recorder{}
	l, _ := New(Config{ID: "t", NoStateDirs: true, Exec: rec})
	if err := l.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := l.Teardown(); err != nil {
		t.Fatal(err)
	}
	text := rec.Text()
	for _, ns := range []string{"cnperf-t-sw", "cnperf-t-h1", "cnperf-t-h2"} {
		if !strings.Contains(text, "ip netns del "+ns+"\n") {
			t.Errorf("teardown does not delete %s:\n%s", ns, text)
		}
	}
	before := len(rec.Lines)
	_ = l.Teardown()
	if len(rec.Lines) != before {
		t.Error("second teardown ran commands again")
	}
}

func TestSplitPods(t *testing.T) {
	l, _ := New(Config{ID: "x", NoStateDirs: true, Exec: &Recorder{}})
	h := l.Hosts[0]
	first, last, err := h.SplitPods()
	if err != nil || first.String() != "10.244.1.128" || last.String() != "10.244.1.254" {
		t.Fatalf("lent %s-%s, %v; want 10.244.1.128-10.244.1.254", first, last, err)
	}
	n := 0
	for {
		a, err := h.NextPodIP()
		if err != nil {
			break
		}
		if !a.Less(first) {
			t.Fatalf("the lab handed out %s, in the lent half", a)
		}
		n++
	}
	if n != 126 { // .2 to .127
		t.Fatalf("the lab kept %d addresses, want 126", n)
	}
	l2, _ := New(Config{ID: "y", NoStateDirs: true, Exec: &Recorder{}})
	for i := 0; i < 130; i++ {
		_, _ = l2.Hosts[0].NextPodIP()
	}
	if _, _, err := l2.Hosts[0].SplitPods(); err == nil {
		t.Fatal("lent a half the lab already uses")
	}
}

// AddHost puts one more host on the switch, at the address asked, with the
// same commands as a numbered host; addresses off the underlay or taken are
// refused before anything is made.
func TestAddHost(t *testing.T) {
	rec := &Recorder{}
	l, err := New(Config{Hosts: 2, ID: "kube", HostPrefix: "n", NoStateDirs: true, Exec: rec})
	if err != nil {
		t.Fatal(err)
	}
	if l.Hosts[1].NetNS != "cnperf-kube-n2" || l.Hosts[1].Name != "n2" {
		t.Fatalf("host 2 is %s (%s), want n2 in cnperf-kube-n2", l.Hosts[1].Name, l.Hosts[1].NetNS)
	}
	ctx := context.Background()
	if err := l.Create(ctx); err != nil {
		t.Fatal(err)
	}
	rec.Lines = nil
	cp, err := l.AddHost(ctx, "cp", netip.MustParseAddr("10.100.0.250"))
	if err != nil {
		t.Fatal(err)
	}
	want := `ip netns add cnperf-kube-cp
ip -n cnperf-kube-cp link set lo up
ip -n cnperf-kube-sw link add cp mtu 1500 type veth peer name eth0 mtu 1500 netns cnperf-kube-cp
ip -n cnperf-kube-sw link set cp master br0 up
ip -n cnperf-kube-cp addr add 10.100.0.250/24 dev eth0
ip -n cnperf-kube-cp link set eth0 up
ip netns exec cnperf-kube-cp sysctl -q -w net.ipv4.ip_forward=1
`
	if got := rec.Text(); got != want {
		t.Errorf("AddHost ran\n%s\nwant\n%s", got, want)
	}
	if cp.NetNS != "cnperf-kube-cp" || cp.IP.String() != "10.100.0.250" {
		t.Errorf("host cp = %s %s", cp.NetNS, cp.IP)
	}
	for _, c := range []struct{ name, ip, want string }{
		{"x", "10.100.0.1", "has that name or address"},
		{"n1", "10.100.0.9", "has that name or address"},
		{"x", "10.100.1.9", "not a host address"},
		{"x", "10.100.0.255", "not a host address"},
	} {
		rec.Lines = nil
		_, err := l.AddHost(ctx, c.name, netip.MustParseAddr(c.ip))
		if err == nil || !strings.Contains(err.Error(), c.want) || len(rec.Lines) > 0 {
			t.Errorf("AddHost(%s, %s) = %v after %d commands, want an error saying %q and none", c.name, c.ip, err, len(rec.Lines), c.want)
		}
	}
}
