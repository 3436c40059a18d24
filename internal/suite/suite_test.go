package suite_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/experiment"
	_ "github.com/cnperf/cnperf/internal/experiment/all"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/workload"
)

// isOption is what a suite's other keys must be: an experiment's option
// or a workload's.
func isOption(name string) bool {
	if _, ok := option.Find(experiment.Options(), name); ok {
		return true
	}
	return slices.ContainsFunc(workload.Flags(), func(f workload.Flag) bool { return f.Name == name })
}

// TestEmbeddedSuites: every built-in suite is a file that reads with its
// keys checked, names networks and workloads that exist, and says how to
// run it.
func TestEmbeddedSuites(t *testing.T) {
	names := suite.Names()
	if len(names) < 11 {
		t.Fatalf("%d suites: %v", len(names), names)
	}
	for _, n := range names {
		b, err := suite.File(n)
		if err != nil {
			t.Fatal(err)
		}
		s, err := suite.ParseFile(n+".yaml", b, isOption)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if !strings.HasPrefix(string(b), "# ") || !strings.Contains(string(b), "cnperf run -f THIS-FILE") {
			t.Errorf("%s: the file does not open with a comment saying how to run it", n)
		}
		if s.Summary == "" || s.Source == "" || len(s.Cases) == 0 || len(s.Workloads) == 0 {
			t.Errorf("%s: summary, source, cases and workloads are required: %+v", n, s)
		}
		for _, v := range []suite.Suite{s, s.Quick()} {
			for _, c := range v.Cases {
				if _, err := netmode.Get(c.Network); err != nil {
					t.Errorf("%s: %v", n, err)
				}
			}
			for _, w := range v.Workloads {
				if _, err := workload.Get(w); err != nil && w != "startup" && w != "alltoall" && w != "blocking" {
					t.Errorf("%s: %v", n, err)
				}
			}
		}
	}
	if _, err := suite.File("nope"); err == nil || !strings.Contains(err.Error(), "`cnperf suites` lists them") {
		t.Errorf("an unknown suite: %v", err)
	}
}

func TestQuickBlock(t *testing.T) {
	src := `# a suite
name: q
suite:
  summary: s
  source: t
  cases: [{network: vxlan, placement: cross-host}, {network: host, placement: same-host}]
  workloads: [tcp_stream]
  message-size: 1024
  neighbours: busy:5
  rate: [100, 200]
  duration: 5s
  repeat: 3
  quick:
    cases: [{network: vxlan, placement: cross-node}]
    message-size: [64, 1024]
    rate: 100
`
	s, err := suite.ParseFile("q.yaml", []byte(src), isOption)
	if err != nil {
		t.Fatal(err)
	}
	if s.Params.MessageSize != 1024 || s.Options["rate"] != "100,200" || s.Options["neighbours"] != "busy:5" || s.Rounds != 3 || s.Params.Duration != 5*time.Second {
		t.Fatalf("suite %+v", s)
	}
	q := s.Quick()
	if q.Params.MessageSize != 0 || q.Options["message-size"] != "64,1024" || q.Options["rate"] != "100" || q.Options["neighbours"] != "busy:5" ||
		len(q.Cases) != 1 || q.Cases[0].Placement != ground.CrossHost || q.Rounds != 3 || q.Params.Duration != 5*time.Second || q.Short != nil {
		t.Errorf("quick %+v", q)
	}
	if s.Options["rate"] != "100,200" || len(s.Cases) != 2 {
		t.Errorf("Quick changed the suite: %+v", s)
	}
	// without a quick: block, one round of 1 s cells
	s.Short = nil
	if q := s.Quick(); q.Rounds != 1 || q.Params.Duration != time.Second || q.Params.MessageSize != 1024 {
		t.Errorf("default quick %+v", q)
	}
	if _, err := suite.ParseFile("q.yaml", []byte(strings.Replace(src, "rate: 100\n", "rtae: 100\n", 1)), isOption); err == nil ||
		!strings.Contains(err.Error(), `q.yaml:16: unknown key "rtae" in the quick: block of scenario "q"`) {
		t.Errorf("a misspelt option: %v", err)
	}
	if _, err := suite.ParseFile("q.yaml", []byte("name: q\nsuite: {}\nnetworks: x\n"), nil); err == nil || !strings.Contains(err.Error(), `q.yaml:3: a suite file has name and suite only, not "networks"`) {
		t.Errorf("a suite file with a flag: %v", err)
	}
}
