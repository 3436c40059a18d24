package cloudrouted

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	"github.com/cnperf/cnperf/internal/netmode/hostgw"
)

func routedLab(t *testing.T, hosts int, opts map[string]string) (*lab.Lab, *lab.Recorder) {
	t.Helper()
	rec := &lab.Recorder{}
	cfg := lab.Config{ID: "x", Hosts: hosts, Exec: rec, NoStateDirs: true, ModeOptions: opts}
	Mode{}.ShapeLab(&cfg)
	l, err := lab.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l, rec
}

func TestCommands(t *testing.T) {
	l, rec := routedLab(t, 2, nil)
	if err := (Mode{}).Setup(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "commands", rec.Text())
}

func TestRouteLimit(t *testing.T) {
	tests := []struct {
		hosts   int
		opts    map[string]string
		wantErr string
	}{
		{50, nil, ""},
		{51, nil, "at most 50 routes and h51 needs one more"},
		{3, map[string]string{"route-limit": "2"}, "at most 2 routes"},
		{2, map[string]string{"route-limit": "none"}, "use a positive number"},
	}
	for _, tt := range tests {
		l, rec := routedLab(t, tt.hosts, tt.opts)
		err := (Mode{}).Setup(context.Background(), l)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("%d hosts: %v", tt.hosts, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%d hosts %v: error %v, want %q", tt.hosts, tt.opts, err, tt.wantErr)
		}
		if strings.Contains(tt.wantErr, "routes") && !errors.Is(err, ErrRouteLimit) {
			t.Errorf("%d hosts: %v is not ErrRouteLimit", tt.hosts, err)
		}
		// refused before configuring anything
		if len(rec.Lines) != 0 {
			t.Errorf("%d hosts: %d commands issued before the refusal", tt.hosts, len(rec.Lines))
		}
	}
}

func TestHostGWRefusedOnRoutedUnderlay(t *testing.T) {
	l, _ := routedLab(t, 2, nil)
	err := hostgw.Mode{}.Setup(context.Background(), l)
	if err == nil || !strings.Contains(err.Error(), "L2 adjacency") {
		t.Fatalf("host-gw on a routed underlay: %v, want a refusal naming L2 adjacency", err)
	}
}

func TestNeedsRoutedLab(t *testing.T) {
	l, err := lab.New(lab.Config{ID: "x", Exec: &lab.Recorder{}, NoStateDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := (Mode{}).Setup(context.Background(), l); err == nil || !strings.Contains(err.Error(), "routed underlay") {
		t.Fatalf("on a switched lab: %v", err)
	}
}

func TestEndToEnd(t *testing.T) {
	labrun.Run(t, "cloud-routed", labrun.Options{})
}

// TestLimitLeavesNothing: past the limit, a real run fails with the reason
// and leaves no namespace behind.
func TestLimitLeavesNothing(t *testing.T) {
	labtest.NeedRoot(t)
	cfg := lab.Config{ID: "t" + lab.NewID(), Hosts: 3, ModeOptions: map[string]string{"route-limit": "2"}}
	Mode{}.ShapeLab(&cfg)
	l, err := lab.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := l.Create(ctx); err != nil {
		l.Teardown()
		t.Fatal(err)
	}
	serr := Mode{}.Setup(ctx, l)
	if err := l.Teardown(); err != nil {
		t.Error(err)
	}
	labtest.AssertClean(t, l.ID)
	if !errors.Is(serr, ErrRouteLimit) {
		t.Fatalf("setup: %v, want %v", serr, ErrRouteLimit)
	}
}

// TestGolden records every command of a cloud-routed lab (a routed
// underlay, shaped by the mode) with pods on both hosts.
func TestGolden(t *testing.T) { labtest.Golden(t, "cloud-routed") }
