package parallel

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
)

// The section's line of a cell of three flows: the aggregate, the smallest
// and largest flow and Jain's index, each read from the result.
func TestText(t *testing.T) {
	gbit := func(v float64) result.Metrics { return result.Metrics{ThroughputBps: result.F(v * 1e9)} }
	par := gbit(3)
	par.Extra = map[string]float64{result.ExtraFlows: 3, result.ExtraJain: 0.9, result.ExtraFlowMin: 0.5e9, result.ExtraFlowMax: 1.5e9}
	run := &result.Run{Results: []result.Result{
		{Network: "host-gw", Workload: "tcp_stream", Placement: "cross-host", Step: "flows=3",
			Metrics: par, Flows: []result.Metrics{gbit(0.5), gbit(1), gbit(1.5)}},
		{Network: "vxlan", Workload: "tcp_stream", Placement: "cross-host", Metrics: gbit(1)}, // one flow: not in it
	}}
	var b bytes.Buffer
	Text(&b, run)
	out := b.String()
	for _, want := range []string{"host-gw  cross-host  tcp_stream  3      3.00 Gbit/s  0.50      1.50      0.900"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "vxlan") {
		t.Errorf("a one-flow result in the section:\n%s", out)
	}
	b.Reset()
	Text(&b, &result.Run{Results: run.Results[1:]})
	if b.Len() != 0 {
		t.Errorf("a run without flows wrote %q", b.String())
	}
}

// The stored run of the experiment (testdata/parallel.json) renders as
// `cnperf report` prints it, and its page has the flows section with both
// charts drawn from data.
func TestStoredRun(t *testing.T) {
	run, err := result.Read(filepath.Join("testdata", "parallel.json"))
	if err != nil {
		t.Fatal(err)
	}
	in := report.NewInput("parallel.json", run) // refreshes, as `cnperf report` reads it
	var b bytes.Buffer
	report.Table(&b, run)
	golden.Check(t, "parallel.table", b.String())

	var got []string
	for _, s := range report.BuildPage([]report.Input{in}).Sections {
		got = append(got, s.ID)
		if s.ID != "flows" {
			continue
		}
		if len(s.Charts) != 2 {
			t.Errorf("flows section: %d charts, want the shares and Jain's index", len(s.Charts))
		}
		for _, c := range s.Charts {
			if c.Empty() {
				t.Errorf("chart %q has no data", c.Title)
			}
		}
	}
	if g := strings.Join(got, " "); g != "comparison flows environment networks" {
		t.Errorf("sections %s, want comparison flows environment networks (and no study: no seed suite ran)", g)
	}
}
