package macvlan

import (
	"context"
	"testing"

	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
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
	golden.Check(t, "commands", rec.Text())
}

func TestEndToEnd(t *testing.T) {
	labrun.Run(t, "macvlan", labrun.Options{})
}
