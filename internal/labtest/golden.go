package labtest

import (
	"context"
	"testing"

	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
)

// Golden builds mode name in a lab whose commands are recorded, not run
// (no root needed): the hosts, the mode's Setup, a client pod on h1, a
// server pod on h1 and on h2 where the mode allows those placements, and the
// address each placement dials. It compares the command text with
// testdata/NAME.golden (go test -update rewrites it).
func Golden(t testing.TB, name string) { GoldenWith(t, name, nil, name) }

// GoldenWith is Golden with mode options, compared with testdata/FILE.golden.
func GoldenWith(t testing.TB, name string, opts map[string]string, file string) {
	t.Helper()
	m, err := netmode.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	GoldenMode(t, m, opts, nil, file)
}

// GoldenMode is GoldenWith for a given mode instance (one whose datapath a
// test replaced, say) recording into rec, whose Outputs are what the
// recorded commands return (a daemon's status, a route read back); nil
// rec records into a fresh Recorder.
func GoldenMode(t testing.TB, m netmode.Mode, opts map[string]string, rec *lab.Recorder, file string) {
	t.Helper()
	if rec == nil {
		rec = &lab.Recorder{}
	}
	cfg := lab.Config{ID: "test", Exec: rec, NoStateDirs: true, ModeOptions: opts}
	netmode.ShapeLab(m, &cfg)
	l, err := lab.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := l.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Setup(ctx, l); err != nil {
		t.Fatal(err)
	}
	c, err := m.AddPod(ctx, l, l.Hosts[0], "c1")
	if err != nil {
		t.Fatal(err)
	}
	dial := func(p ground.Placement, to *lab.Pod, proto string) {
		ap, err := m.Expose(ctx, l, c, to, proto, 5201)
		if err != nil {
			t.Fatalf("expose %s: %v", p, err)
		}
		rec.Lines = append(rec.Lines, "# "+string(p)+" "+proto+" dials "+ap.String())
	}
	for _, p := range m.Placements() {
		switch p {
		case ground.SamePod:
			dial(p, c, "tcp")
		case ground.SameHost:
			s, err := m.AddPod(ctx, l, l.Hosts[0], "s1")
			if err != nil {
				t.Fatal(err)
			}
			dial(p, s, "tcp")
		case ground.CrossHost:
			s, err := m.AddPod(ctx, l, l.Hosts[1], "s2")
			if err != nil {
				t.Fatal(err)
			}
			dial(p, s, "tcp")
			dial(p, s, "udp")
		}
	}
	golden.Check(t, file, rec.Text())
}

// CompareGolden compares got with the file at path, or rewrites it with
// -update (see package golden).
func CompareGolden(t testing.TB, path, got string) {
	t.Helper()
	golden.Compare(t, path, got)
}

// SetupError runs mode name's Setup in a recording lab (no root) with the
// given options and returns its error, for option validation tests.
func SetupError(t testing.TB, name string, opts map[string]string) error {
	t.Helper()
	m, err := netmode.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lab.New(lab.Config{ID: "test", Exec: &lab.Recorder{}, NoStateDirs: true, ModeOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	return m.Setup(context.Background(), l)
}
