package plan_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/plan"
)

func TestCheckBackend(t *testing.T) {
	for _, tc := range []struct {
		name, errHas string
	}{
		{"", ""}, {"lab", ""}, {"docker", ""}, {"lab,docker", ""}, {"docker-lab", ""}, {"lab,docker-lab", ""},
		{"k8s", `unknown backend "k8s"`}, {"lab,lab", "twice"}, {"lab,", `unknown backend ""`},
	} {
		err := plan.CheckBackend(tc.name)
		if (tc.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.errHas)) {
			t.Errorf("CheckBackend(%q) = %v, want %q", tc.name, err, tc.errHas)
		}
	}
}

// TestSideBySidePlacements: with two backends a case is allowed where one
// of them allows it, and the plan is refused only where none does.
func TestSideBySidePlacements(t *testing.T) {
	p := plan.Plan{BackendName: "lab,docker"}
	be, err := p.NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		network string
		pl      ground.Placement
		ok      bool
	}{
		{"nat", ground.CrossHost, true},   // the lab's
		{"nat", ground.SameHost, true},    // docker's (a published port on one engine)
		{"vxlan", ground.CrossHost, true}, // the lab's only
		{"bridge", ground.CrossHost, false},
	} {
		ok, why := be.Allows(tc.network, tc.pl)
		if ok != tc.ok || (!ok && !strings.Contains(why, "docker")) {
			t.Errorf("Allows(%s, %s) = %v %q, want %v (naming each backend's reason)", tc.network, tc.pl, ok, why, tc.ok)
		}
	}
}

// TestBackendOptions: docker-lab's own options are taken where a selected
// network runs on docker-lab, and refused, naming where they belong,
// where none does.
func TestBackendOptions(t *testing.T) {
	for _, tc := range []struct {
		backend, network, opt, errHas string
	}{
		{"lab,docker-lab", "nat", "userland-proxy=false", ""},
		{"docker-lab", "nat", "userland-proxy=false", ""},
		{"docker-lab", "nat", "userland-proxy=maybe", "want true or false"},
		{"lab", "nat", "userland-proxy=false", "it is an option of docker-lab:nat"},
		{"docker-lab", "host", "userland-proxy=false", "it is an option of docker-lab:nat"},
		{"lab,docker-lab", "docker-overlay", "encrypt=false", ""},
		{"lab,docker-lab", "docker-overlay", "controlplane=off", ""}, // the lab replica's own
		{"lab,docker-lab", "docker-overlay", "encrypt=true", encryptErr()},
	} {
		p := plan.Plan{BackendName: tc.backend, Workloads: []string{"tcp_rr"},
			Cases: []plan.Case{{Network: tc.network, Placement: ground.CrossHost}}}
		k, v, _ := strings.Cut(tc.opt, "=")
		p.Lab.ModeOptions = map[string]string{k: v}
		err := p.Validate()
		if (tc.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.errHas)) {
			t.Errorf("%s %s --mode-opt %s: %v, want %q", tc.backend, tc.network, tc.opt, err, tc.errHas)
		}
	}
}

// encryptErr is what encrypt=true on docker-lab's overlay gives on this
// machine: nothing where the kernel has IPsec ESP, else the one line that
// names the missing option.
func encryptErr() string {
	if netmode.RunningKernel().Has("CONFIG_INET_ESP") && netmode.RunningKernel().Has("CONFIG_CRYPTO_GCM") {
		return ""
	}
	return "needs IPsec in the kernel; this kernel lacks CONFIG_"
}

// TestBackendPlacements: a backend's own --placement value (kubernetes'
// cross-zone) runs as the placement it stands for, the backend told; on
// another backend it is refused in one line naming the backend that has it.
func TestBackendPlacements(t *testing.T) {
	for _, tc := range []struct {
		backend, placements string
		cases, own, errHas  string
	}{
		{"kubernetes", "cross-zone", "pod/cross-host", "cross-zone", ""},
		{"kubernetes", "same-host,cross-zone,cross-host", "pod/same-host pod/cross-host", "cross-zone", ""},
		{"kubernetes", "cross-host", "pod/cross-host", "", ""},
		{"lab", "cross-zone", "", "", "--placement cross-zone chooses nodes of two zones of a cluster; use it with --backend kubernetes alone"},
		{"docker,kubernetes", "cross-zone", "", "", "use it with --backend kubernetes alone"},
	} {
		net, flags := "pod", map[string]string{"image": "cnperf:1"}
		if !strings.Contains(tc.backend, "kubernetes") {
			net, flags = "bridge", nil
		}
		p, err := plan.Build(plan.Request{Backend: tc.backend, Networks: net, Placements: tc.placements, NoBaseline: true,
			Workloads: "tcp_rr", BackendFlags: flags})
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%s --placement %s: %v, want %q", tc.backend, tc.placements, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s --placement %s: %v", tc.backend, tc.placements, err)
			continue
		}
		var cases []string
		for _, c := range p.Cases {
			cases = append(cases, c.Network+"/"+string(c.Placement))
		}
		if got := strings.Join(cases, " "); got != tc.cases || strings.Join(p.BackendPlacements, ",") != tc.own {
			t.Errorf("%s --placement %s: cases %q, own %v; want %q, %q", tc.backend, tc.placements, got, p.BackendPlacements, tc.cases, tc.own)
		}
	}
	if u := plan.PlacementUsage(); !strings.Contains(u, "--backend kubernetes also cross-zone (cross-host: chooses nodes of two zones of a cluster)") {
		t.Errorf("PlacementUsage() = %q", u)
	}
}

// TestBackendListFlags: a backend's list flag given twice keeps both
// values (--tolerate is repeatable), a string flag the last.
func TestBackendListFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
		want string
	}{
		{[]string{"--tolerate", "a:NoSchedule", "--tolerate", "b=c:NoExecute"}, "tolerate", "a:NoSchedule,b=c:NoExecute"},
		{[]string{"--node-selector", "x=1"}, "node-selector", "x=1"},
		{[]string{"--image", "a:1", "--image", "b:2"}, "image", "b:2"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		flags := plan.FlagsOfBackends(fs, false)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := *flags[tc.flag]; got != tc.want {
			t.Errorf("%v: --%s = %q; want %q", tc.args, tc.flag, got, tc.want)
		}
	}
}
