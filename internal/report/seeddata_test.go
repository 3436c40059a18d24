package report_test

import (
	"math"
	"slices"
	"testing"

	_ "github.com/cnperf/cnperf/internal/experiment/all"
	"github.com/cnperf/cnperf/internal/netmode"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/svc"
	_ "github.com/cnperf/cnperf/internal/svc/all"
	"github.com/cnperf/cnperf/internal/workload"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

// TestSeedTablesWellFormed: every transcribed study table names what this
// cnperf has (networks, load balancers, workloads, a suite that holds its
// rows), has a value (or range) per row and column, and a reference that
// is one of its rows: a renamed network or workload fails here, not as a
// silently empty section.
func TestSeedTablesWellFormed(t *testing.T) {
	ids := map[string]bool{}
	for _, tb := range report.SeedTables {
		if ids[tb.ID] {
			t.Errorf("duplicate id %s", tb.ID)
		}
		ids[tb.ID] = true
		if tb.Source == "" || tb.Cite == "" || tb.Title == "" {
			t.Errorf("%s: no source, citation or title", tb.ID)
		}
		s, err := suite.Get(tb.Suite)
		if err != nil {
			t.Errorf("%s: %v", tb.ID, err)
		}
		var wls []string
		wls = append(wls, tb.Workloads...)
		for _, c := range tb.Columns {
			if c.Workload != "" {
				wls = append(wls, c.Workload)
			}
			if c.Metric == "" {
				t.Errorf("%s: column %q reads no metric", tb.ID, c.Label)
			}
		}
		for _, w := range wls {
			_, err := workload.Get(w)
			if _, ok := workload.GetMeasure(w); err != nil && !ok {
				t.Errorf("%s: unknown workload %s", tb.ID, w)
			}
		}
		if tb.Form != report.Rank && !slices.ContainsFunc(tb.Rows, func(r report.SeedRow) bool { return r.Name == tb.Reference }) && !tb.Columns[0].IsRatio {
			t.Errorf("%s: reference %q is not a row", tb.ID, tb.Reference)
		}
		inSuite := false
		for _, r := range tb.Rows {
			if len(r.Values) != len(tb.Columns) {
				t.Errorf("%s %s: %d values for %d columns", tb.ID, r.Name, len(r.Values), len(tb.Columns))
			}
			for i, v := range r.Values {
				lo := math.NaN()
				if i < len(r.Lo) {
					lo = r.Lo[i]
				}
				if math.IsNaN(v) && math.IsNaN(lo) {
					t.Errorf("%s %s column %d: neither a value nor a bound", tb.ID, r.Name, i)
				}
			}
			for _, n := range r.Networks {
				if n == result.BaselineNetwork {
					continue
				}
				if _, err := netmode.Get(n); err != nil {
					t.Errorf("%s %s: %v", tb.ID, r.Name, err)
				}
			}
			if r.LB != "" && !slices.Contains(svc.Names(), r.LB) {
				t.Errorf("%s %s: unknown load balancer %s (have %v)", tb.ID, r.Name, r.LB, svc.Names())
			}
			for _, c := range s.Cases {
				if slices.Contains(r.Networks, c.Network) || len(r.Networks) == 0 {
					inSuite = true
				}
			}
		}
		if !inSuite {
			t.Errorf("%s: suite %s runs none of its rows' networks", tb.ID, tb.Suite)
		}
	}
}

// TestSeedRowsAgree: a study's row that stands for one network names the
// same network in every table of that study (seed 002's Mesos bridge mode
// was nat in one table and bridge in another).
func TestSeedRowsAgree(t *testing.T) {
	seen := map[string]string{} // source + row name -> network
	for _, tb := range report.SeedTables {
		for _, r := range tb.Rows {
			if len(r.Networks) != 1 {
				continue
			}
			k := tb.Source + " " + r.Name + " lb=" + r.LB
			if n, ok := seen[k]; ok && n != r.Networks[0] {
				t.Errorf("%s: %q is %s in %s, %s elsewhere", tb.Source, r.Name, r.Networks[0], tb.ID, n)
			}
			seen[k] = r.Networks[0]
		}
	}
	const seed002 = "seeds/002_ad758885e6dfb4a7.txt"
	if seen[seed002+" Mesos bridge mode lb="] != "nat" {
		t.Errorf("seed 002's Mesos bridge mode is %q, want nat (Docker -p: the host NATs to the container)", seen[seed002+" Mesos bridge mode lb="])
	}
}
