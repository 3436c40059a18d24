package calicobgp

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/netmode"
)

func recLab(t *testing.T, hosts int, opts map[string]string) (*lab.Lab, *lab.Recorder) {
	t.Helper()
	rec := &lab.Recorder{}
	l, err := lab.New(lab.Config{ID: "x", Hosts: hosts, Exec: rec, NoStateDirs: true, ModeOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	return l, rec
}

const meshH1 = `# cnperf calico-bgp, host h1
router id 10.100.0.1;
log stderr all;

protocol device {
	scan time 2;
}

# the IPAM blocks affine to this host: announced to peers, blackholed
# locally (the pods' /32 routes are more specific)
protocol static pods {
	ipv4;
	route 10.244.1.0/26 blackhole;
	route 10.244.1.64/26 blackhole;
}

protocol kernel {
	scan time 2;
	ipv4 {
		import none;
		export all;
	};
}

template bgp calico {
	local 10.100.0.1 as 64512;
	direct;
	ipv4 {
		gateway direct;
		import all;
		export where proto = "pods";
	};
	connect delay time 2;
	connect retry time 5;
	error wait time 5, 30;
}

protocol bgp peer_h2 from calico {
	neighbor 10.100.0.2 as 64512;
}

protocol bgp peer_h3 from calico {
	neighbor 10.100.0.3 as 64512;
}
`

const rrH1Tail = `template bgp calico {
	local 10.100.0.1 as 64512;
	direct;
	ipv4 {
		gateway direct;
		import all;
		export where proto = "pods" || source = RTS_BGP;
	};
	connect delay time 2;
	connect retry time 5;
	error wait time 5, 30;
}

protocol bgp peer_h2 from calico {
	neighbor 10.100.0.2 as 64512;
	rr client;
}

protocol bgp peer_h3 from calico {
	neighbor 10.100.0.3 as 64512;
	rr client;
}
`

const rrH3Tail = `template bgp calico {
	local 10.100.0.3 as 64512;
	direct;
	ipv4 {
		gateway direct;
		import all;
		export where proto = "pods";
	};
	connect delay time 2;
	connect retry time 5;
	error wait time 5, 30;
}

protocol bgp peer_h1 from calico {
	neighbor 10.100.0.1 as 64512;
}
`

func TestBirdConfig(t *testing.T) {
	tests := []struct {
		name   string
		opts   map[string]string
		host   int
		suffix string // the config must end with this
	}{
		{"mesh-h1", nil, 0, meshH1},
		{"rr-reflector", map[string]string{"bgp": "rr"}, 0, rrH1Tail},
		{"rr-client", map[string]string{"bgp": "rr"}, 2, rrH3Tail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, _ := recLab(t, 3, tt.opts)
			o, err := ParseOptions(&l.Cfg)
			if err != nil {
				t.Fatal(err)
			}
			blocks := []netip.Prefix{netip.MustParsePrefix("10.244.1.0/26"), netip.MustParsePrefix("10.244.1.64/26")}
			got := BirdConfig(l, l.Hosts[tt.host], o, blocks)
			if !strings.HasSuffix(got, tt.suffix) {
				t.Errorf("config:\n%s\nwant it to end with:\n%s", got, tt.suffix)
			}
			// the text must be what BIRD itself accepts
			if _, err := exec.LookPath("bird"); err == nil {
				f := filepath.Join(t.TempDir(), "bird.conf")
				if err := os.WriteFile(f, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command("bird", "-p", "-c", f).CombinedOutput(); err != nil {
					t.Errorf("bird -p rejects the config: %v: %s", err, out)
				}
			}
		})
	}
}

func TestParseOptions(t *testing.T) {
	tests := []struct {
		opts    map[string]string
		want    Options
		wantErr string
	}{
		{nil, Options{Timeout: 30 * time.Second, ControlPlane: true, Block: 26}, ""},
		{map[string]string{"bgp": "rr", "bgp-timeout": "5s", "controlplane": "off", "block": "32"}, Options{Reflector: true, Timeout: 5 * time.Second, Block: 32}, ""},
		{map[string]string{"block": "16"}, Options{}, "from 24"},
		{map[string]string{"bgp": "ibgp"}, Options{}, "use bgp=mesh or bgp=rr"},
		{map[string]string{"bgp-timeout": "soon"}, Options{}, "use a duration"},
		{map[string]string{"controlplane": "maybe"}, Options{}, "use on or off"},
	}
	for _, tt := range tests {
		c := lab.Config{ModeOptions: tt.opts}
		got, err := ParseOptions(&c)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: error %v, want %q", tt.opts, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%v: got %+v, %v; want %+v", tt.opts, got, err, tt.want)
		}
	}
}

func TestNotEstablished(t *testing.T) {
	out := `BIRD 2.0.12 ready.
Name       Proto      Table      State  Since         Info
device1    Device     ---        up     00:10:01.123
pods       Static     master4    up     00:10:01.123
kernel1    Kernel     master4    up     00:10:01.123
peer_h2    BGP        ---        up     00:10:03.456  Established
peer_h3    BGP        ---        start  00:10:01.123  Connect
`
	if got := NotEstablished(out); len(got) != 1 || got[0] != "peer_h3" {
		t.Errorf("not established %v, want [peer_h3]", got)
	}
}

func TestPodCommands(t *testing.T) {
	l, rec := recLab(t, 2, map[string]string{"controlplane": "off"})
	if _, err := (&Mode{}).AddPod(context.Background(), l, l.Hosts[1], "s2"); err != nil {
		t.Fatal(err)
	}
	want := `ip netns add cnperf-x-h2-s2
ip -n cnperf-x-h2-s2 link set lo up
ip -n cnperf-x-h2 link add calis2 mtu 1500 type veth peer name eth0 mtu 1500 netns cnperf-x-h2-s2
ip netns exec cnperf-x-h2 sysctl -q -w net.ipv4.conf.calis2.proxy_arp=1
ip netns exec cnperf-x-h2 sysctl -q -w net.ipv4.neigh.calis2.proxy_delay=0
ip -n cnperf-x-h2 link set calis2 up
ip -n cnperf-x-h2 route add 10.244.2.2/32 dev calis2 scope link
ip -n cnperf-x-h2-s2 addr add 10.244.2.2/32 dev eth0
ip -n cnperf-x-h2-s2 link set eth0 up
ip -n cnperf-x-h2-s2 route add default via 169.254.1.1 dev eth0 onlink
`
	if got := rec.Text(); got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
}

func TestStaticCommands(t *testing.T) {
	l, rec := recLab(t, 2, map[string]string{"controlplane": "off"})
	if err := (&Mode{}).Setup(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	want := `ip -n cnperf-x-h1 route add 169.254.1.1/32 dev eth0 scope link
ip -n cnperf-x-h2 route add 169.254.1.1/32 dev eth0 scope link
ip -n cnperf-x-h1 route add blackhole 10.244.1.0/24
ip -n cnperf-x-h1 route add 10.244.2.0/24 via 10.100.0.2 dev eth0
ip -n cnperf-x-h2 route add blackhole 10.244.2.0/24
ip -n cnperf-x-h2 route add 10.244.1.0/24 via 10.100.0.1 dev eth0
`
	if got := rec.Text(); got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
}

func TestEndToEnd(t *testing.T) {
	for _, opt := range []string{"mesh", "rr"} {
		t.Run(opt, func(t *testing.T) {
			labtest.Run(t, "calico-bgp", labtest.Options{Lab: lab.Config{Hosts: 3, ModeOptions: map[string]string{"bgp": opt}}})
		})
	}
	t.Run("controlplane-off", func(t *testing.T) {
		labtest.Run(t, "calico-bgp", labtest.Options{
			Lab: lab.Config{ModeOptions: map[string]string{"controlplane": "off"}}, Workloads: []string{"tcp_rr"},
		})
	})
}

// setupErr builds a lab, runs m's Setup, tears down, and returns Setup's
// error after checking nothing was left.
func setupErr(t *testing.T, m *Mode, opts map[string]string, then func(*lab.Lab) error) (error, map[string]time.Duration) {
	t.Helper()
	labtest.NeedRoot(t)
	l, err := lab.New(lab.Config{ID: "t" + lab.NewID(), ModeOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := l.Create(ctx); err != nil {
		l.Teardown()
		t.Fatal(err)
	}
	serr := m.Setup(ctx, l)
	if serr == nil && then != nil {
		serr = then(l)
	}
	ph := m.SetupPhases(l)
	if err := l.Teardown(); err != nil {
		t.Error(err)
	}
	labtest.AssertClean(t, l.ID)
	return serr, ph
}

func TestConvergencePhase(t *testing.T) {
	err, ph := setupErr(t, &Mode{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := ph["bgp_convergence"]; d <= 0 {
		t.Errorf("bgp_convergence phase %v, want > 0", d)
	} else {
		t.Logf("bgp converged in %v", d)
	}
}

func TestNotConverged(t *testing.T) {
	// BIRD's connect delay is 2 s: nothing can converge in 100 ms
	err, _ := setupErr(t, &Mode{}, map[string]string{"bgp-timeout": "100ms"}, nil)
	if !errors.Is(err, ErrNotConverged) || !strings.Contains(err.Error(), "bgp-timeout") {
		t.Fatalf("error %v, want %v naming bgp-timeout", err, ErrNotConverged)
	}
}

func TestMissingBird(t *testing.T) {
	m := &Mode{LookPath: func(string) (string, error) { return "", exec.ErrNotFound }}
	err, _ := setupErr(t, m, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "apt-get install bird2") {
		t.Fatalf("error %v, want one naming apt-get install bird2", err)
	}
}

// TestBlockClaims: a host's first pod in a block announces it over BGP (the
// peer gets the route), a second pod in the same block does not.
func TestBlockClaims(t *testing.T) {
	m := &Mode{}
	err, _ := setupErr(t, m, nil, func(l *lab.Lab) error {
		ctx := context.Background()
		h1, h2 := l.Hosts[0], l.Hosts[1]
		for _, name := range []string{"a", "b"} {
			pod, err := m.AddPod(ctx, l, h1, name)
			if err != nil {
				return err
			}
			out, err := l.Cfg.Exec.Run(ctx, []string{"ip", "-n", h2.NetNS, "route", "show", "proto", "bird"})
			if err != nil {
				return err
			}
			if !strings.Contains(string(out), "10.244.1.0/26 via 10.100.0.1") {
				return fmt.Errorf("after pod %s (%s), h2's BGP routes are %q; want 10.244.1.0/26 via h1", name, pod.IP, out)
			}
		}
		st := m.st.Of(l)
		if n := len(st.blocks[h1]); n != 1 {
			return fmt.Errorf("%d blocks claimed on h1 for two pods, want 1", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReflector: with bgp=rr, h2 and h3 peer only with h1, yet h3 learns
// h2's block (reflected by h1) and can reach h2's pod through it.
func TestReflector(t *testing.T) {
	labtest.NeedRoot(t)
	l, err := lab.New(lab.Config{ID: "t" + lab.NewID(), Hosts: 3, ModeOptions: map[string]string{"bgp": "rr"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Teardown()
		labtest.AssertClean(t, l.ID)
	})
	ctx := context.Background()
	if err := l.Create(ctx); err != nil {
		t.Fatal(err)
	}
	m := &Mode{}
	if err := m.Setup(ctx, l); err != nil {
		t.Fatal(err)
	}
	if _, err := m.AddPod(ctx, l, l.Hosts[1], "s2"); err != nil {
		t.Fatal(err)
	}
	out, err := l.Cfg.Exec.Run(ctx, []string{"ip", "-n", l.Hosts[2].NetNS, "route", "show", "proto", "bird"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "10.244.2.0/26 via 10.100.0.2") {
		t.Errorf("h3's BGP routes %q; want h2's block via h2 (next hop kept by the reflector)", out)
	}
	peers, _ := l.Cfg.Exec.Run(ctx, []string{"birdc", "-s", SocketPath(l, l.Hosts[2]), "show", "protocols"})
	if strings.Contains(string(peers), "peer_h2") {
		t.Errorf("h3 peers with h2 under a route reflector:\n%s", peers)
	}
}

var _ netmode.SetupPhaser = &Mode{}
