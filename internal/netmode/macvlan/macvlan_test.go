package macvlan

import (
	"context"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
)

func TestCommands(t *testing.T) {
	rec := &lab.Recorder{}
	l, err := lab.New(lab.Config{ID: "x", Exec: rec, NoStateDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := (Mode{}).Setup(ctx, l); err != nil {
		t.Fatal(err)
	}
	for i, h := range l.Hosts {
		if _, err := (Mode{}).AddPod(ctx, l, h, []string{"c1", "s2"}[i]); err != nil {
			t.Fatal(err)
		}
	}
	want := `ip netns add cnperf-x-h1-c1
ip -n cnperf-x-h1-c1 link set lo up
ip -n cnperf-x-h1 link add link eth0 name eth0 netns cnperf-x-h1-c1 mtu 1500 type macvlan mode bridge
ip -n cnperf-x-h1-c1 addr add 10.244.1.2/16 dev eth0
ip -n cnperf-x-h1-c1 link set eth0 up
ip netns add cnperf-x-h2-s2
ip -n cnperf-x-h2-s2 link set lo up
ip -n cnperf-x-h2 link add link eth0 name eth0 netns cnperf-x-h2-s2 mtu 1500 type macvlan mode bridge
ip -n cnperf-x-h2-s2 addr add 10.244.2.2/16 dev eth0
ip -n cnperf-x-h2-s2 link set eth0 up
`
	if got := rec.Text(); got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
}

func TestEndToEnd(t *testing.T) {
	labtest.Run(t, "macvlan", labtest.Options{})
}
