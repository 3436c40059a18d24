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

	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
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

func TestBirdConfig(t *testing.T) {
	tests := []struct {
		name string // testdata/bird-NAME.golden
		opts map[string]string
		host int
	}{
		{"mesh-h1", nil, 0},
		{"rr-reflector", map[string]string{"bgp": "rr"}, 0},
		{"rr-client", map[string]string{"bgp": "rr"}, 2},
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
			golden.Check(t, "bird-"+tt.name, got)
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
	golden.Check(t, "pod-commands", rec.Text())
}

func TestStaticCommands(t *testing.T) {
	l, rec := recLab(t, 2, map[string]string{"controlplane": "off"})
	if err := (&Mode{}).Setup(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "static-commands", rec.Text())
}

func TestEndToEnd(t *testing.T) {
	for _, opt := range []string{"mesh", "rr"} {
		t.Run(opt, func(t *testing.T) {
			labrun.Run(t, "calico-bgp", labrun.Options{Lab: lab.Config{Hosts: 3, ModeOptions: map[string]string{"bgp": opt}}})
		})
	}
	t.Run("controlplane-off", func(t *testing.T) {
		labrun.Run(t, "calico-bgp", labrun.Options{
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

// TestGolden records every command calico-bgp runs, BIRD's start and
// reconfiguration included, with BIRD's answers played back: the sessions
// are established, and each claimed block reaches the other host.
func TestGolden(t *testing.T) {
	up := "peer_h1    BGP        ---        up     00:10:03.456  Established\npeer_h2    BGP        ---        up     00:10:03.456  Established\n"
	outputs := map[string]string{
		"birdc -s /run/cnperf/test/bird-h1.ctl show protocols":           up,
		"birdc -s /run/cnperf/test/bird-h2.ctl show protocols":           up,
		"ip -n cnperf-test-h2 route show proto bird exact 10.244.1.0/26": "10.244.1.0/26 via 10.100.0.1 dev eth0 proto bird metric 32",
		"ip -n cnperf-test-h1 route show proto bird exact 10.244.2.0/26": "10.244.2.0/26 via 10.100.0.2 dev eth0 proto bird metric 32",
	}
	for _, c := range []struct {
		file string
		opts map[string]string
	}{
		{"calico-bgp", nil},
		{"calico-bgp-static", map[string]string{"controlplane": "off"}},
	} {
		t.Run(c.file, func(t *testing.T) { labtest.GoldenMode(t, &Mode{}, c.opts, &lab.Recorder{Outputs: outputs}, c.file) })
	}
}
