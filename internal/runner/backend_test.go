package runner_test

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/runner"
)

func TestCheckBackend(t *testing.T) {
	for _, tc := range []struct {
		name, errHas string
	}{
		{"", ""}, {"lab", ""}, {"docker", ""}, {"lab,docker", ""},
		{"k8s", `unknown backend "k8s"`}, {"lab,lab", "twice"}, {"lab,", `unknown backend ""`},
	} {
		err := runner.CheckBackend(tc.name)
		if (tc.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.errHas)) {
			t.Errorf("CheckBackend(%q) = %v, want %q", tc.name, err, tc.errHas)
		}
	}
}

// TestSideBySidePlacements: with two backends a case is allowed where one
// of them allows it, and the plan is refused only where none does.
func TestSideBySidePlacements(t *testing.T) {
	p := runner.Plan{BackendName: "lab,docker"}
	be, err := p.NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		network string
		pl      backend.Placement
		ok      bool
	}{
		{"nat", backend.CrossHost, true},   // the lab's
		{"nat", backend.SameHost, true},    // docker's (a published port on one engine)
		{"vxlan", backend.CrossHost, true}, // the lab's only
		{"bridge", backend.CrossHost, false},
	} {
		ok, why := be.Allows(tc.network, tc.pl)
		if ok != tc.ok || (!ok && !strings.Contains(why, "docker")) {
			t.Errorf("Allows(%s, %s) = %v %q, want %v (naming each backend's reason)", tc.network, tc.pl, ok, why, tc.ok)
		}
	}
}
