package labbackend

import (
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/netmode"
)

func TestSplitPhases(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	cases := []struct {
		name  string
		marks []phaseMark
		added time.Time
		want  map[string]time.Duration
	}{
		{"no marks", nil, at(30), map[string]time.Duration{
			"links": 30 * time.Millisecond}},
		{"namespace only", []phaseMark{{"namespace", at(10)}}, at(30), map[string]time.Duration{
			"namespace": 10 * time.Millisecond, "links": 20 * time.Millisecond}},
		{"docker-overlay", []phaseMark{{"namespace", at(10)}, {"links", at(25)}, {"kv_registration", at(60)}, {"control_plane", at(90)}},
			at(90), map[string]time.Duration{
				"namespace": 10 * time.Millisecond, "links": 15 * time.Millisecond, "kv_registration": 35 * time.Millisecond,
				"control_plane": 30 * time.Millisecond}},
		{"links, return overhead stays in links", []phaseMark{{"namespace", at(5)}, {"links", at(8)}}, at(8).Add(20 * time.Microsecond), map[string]time.Duration{
			"namespace": 5 * time.Millisecond, "links": 3*time.Millisecond + 20*time.Microsecond}},
		{"links then more work, no peer", []phaseMark{{"namespace", at(5)}, {"links", at(8)}}, at(20), map[string]time.Duration{
			"namespace": 5 * time.Millisecond, "links": 3 * time.Millisecond, "control_plane": 12 * time.Millisecond}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := splitPhases(t0, c.added, c.marks)
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}

func TestPhaseConstants(t *testing.T) {
	if standardPhases[0] != netmode.PhaseNamespace || standardPhases[2] != netmode.PhaseControlPlane {
		t.Fatal("standard phases out of order")
	}
}
