package backend

import (
	"strings"
	"testing"
)

type testPod struct {
	Pod
	extra string
}

func TestBase(t *testing.T) {
	b := NewBase[*testPod]("docker", "d1", "bridge")
	b.Pods["s1"] = &testPod{Pod: Pod{Name: "s1", Host: 2}, extra: "x"}
	b.Pods["c1"] = &testPod{Pod: Pod{Name: "c1", Host: 1}}
	if b.ID() != "d1" || b.Network() != "bridge" || b.Backend() != "docker" {
		t.Errorf("getters: %q %q %q", b.ID(), b.Network(), b.Backend())
	}
	if p := b.Pod("s1"); p == nil || p.Host != 2 {
		t.Errorf("Pod(s1) = %+v, want the pod on host 2", p)
	}
	if p := b.Pod("nope"); p != nil {
		t.Errorf("Pod(nope) = %+v, want nil", p)
	}
	if f, to, err := b.Pair("c1", "s1"); err != nil || f.Name != "c1" || to.extra != "x" {
		t.Errorf("Pair(c1, s1) = %v, %v, %v", f, to, err)
	}
	_, _, err := b.Pair("c1", "s9")
	if err == nil || !strings.Contains(err.Error(), `no pod "c1" or "s9" in docker deployment d1`) {
		t.Errorf("Pair(c1, s9) error = %v, want it to name the deployment", err)
	}
}
