package main

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/workload"
)

// TestListingsJSON: `networks`, `workloads` and `suites --json` print one
// JSON document naming every network, workload and suite the tables
// list; every figure says which way is better.
func TestListingsJSON(t *testing.T) {
	for _, c := range []struct {
		cmd   string
		field string
		want  []string
	}{
		{"networks", "networks", netmode.Names()},
		{"workloads", "workloads", append(workload.Names(), workload.MeasureNames()...)},
		{"suites", "suites", suite.Names()},
	} {
		out, err := stdout(t, func() error { return call(c.cmd, []string{"--json"}) })
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s --json: %v\n%s", c.field, err, out)
		}
		var items []struct {
			Name    string          `json:"name"`
			Figures []result.Figure `json:"figures"`
		}
		if err := json.Unmarshal(doc[c.field], &items); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, it := range items {
			names = append(names, it.Name)
			for _, f := range it.Figures {
				if f.Better != result.HigherBetter && f.Better != result.LowerBetter {
					t.Errorf("%s %s: figure %s says %q is better", c.field, it.Name, f.Key, f.Better)
				}
			}
		}
		if !slices.Equal(names, c.want) {
			t.Errorf("%s --json names %v, want %v", c.field, names, c.want)
		}
	}
}
