package netmode_test

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
)

func recordedLab(t *testing.T, id string) *lab.Lab {
	t.Helper()
	l, err := lab.New(lab.Config{ID: id, Exec: &lab.Recorder{}, NoStateDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// An instance serves one lab at a time, and is free again once that lab is
// torn down.
func TestState(t *testing.T) {
	var s netmode.State[int]
	a, b := recordedLab(t, "a"), recordedLab(t, "b")
	if s.Of(a) != nil {
		t.Fatal("state before Bind")
	}
	one, two := 1, 2
	if err := s.Bind("m", a, &one); err != nil {
		t.Fatal(err)
	}
	if got := s.Of(a); got != &one {
		t.Fatalf("Of(a) = %v", got)
	}
	if s.Of(b) != nil {
		t.Fatal("another lab sees a's state")
	}
	if err := s.Bind("m", b, &two); err == nil || !strings.Contains(err.Error(), "already serves lab a") {
		t.Fatalf("second live lab: %v, want a refusal", err)
	}
	if err := s.Bind("m", a, &two); err != nil || s.Of(a) != &two {
		t.Fatalf("re-Bind of the same lab: %v", err)
	}
	if err := a.Teardown(); err != nil {
		t.Fatal(err)
	}
	if s.Of(a) != nil {
		t.Fatal("state kept after teardown")
	}
	if err := s.Bind("m", b, &one); err != nil || s.Of(b) != &one {
		t.Fatalf("Bind after teardown: %v", err)
	}
}

// Get makes a fresh instance each call: two deployments never share one.
func TestGetIsFresh(t *testing.T) {
	for _, n := range netmode.Names() {
		a, err := netmode.Get(n)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := netmode.New(n)
		if a.Name() != n || b.Name() != n {
			t.Errorf("Get(%s) made %s and %s", n, a.Name(), b.Name())
		}
	}
	// the modes that keep state: distinct instances
	for _, n := range []string{"docker-overlay", "flannel-udp", "weave", "calico-bgp", "ebpf", "nat"} {
		a, _ := netmode.Get(n)
		b, _ := netmode.Get(n)
		if a == b {
			t.Errorf("%s: Get returned the same instance twice", n)
		}
	}
	if _, err := netmode.Get("flanel"); err == nil || !strings.Contains(err.Error(), "cnperf networks") {
		t.Errorf("unknown name: %v", err)
	}
}
