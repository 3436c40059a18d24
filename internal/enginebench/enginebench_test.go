package enginebench

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	_ "github.com/cnperf/cnperf/internal/backend/all"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/plan"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func TestValidate(t *testing.T) {
	ok := Config{Rounds: 3, Duration: 3 * time.Second, Pairs: []string{"http", "rr", "stream"}, Paths: []string{"loopback", "lab"}}
	for _, c := range []struct {
		name string
		edit func(*Config)
		err  string
	}{
		{"fine", func(*Config) {}, ""},
		{"one round", func(c *Config) { c.Rounds = 1 }, "at least 2 rounds"},
		{"short", func(c *Config) { c.Duration = 500 * time.Millisecond }, "whole seconds"},
		{"unknown pair", func(c *Config) { c.Pairs = []string{"udp"} }, `unknown pair "udp"; use one of http, rr, stream`},
		{"unknown path", func(c *Config) { c.Paths = []string{"wan"} }, `unknown path "wan"`},
		{"no path", func(c *Config) { c.Paths = nil }, "at least one pair and one path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := ok
			c.edit(&cfg)
			err := cfg.Validate()
			if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Errorf("Validate() = %v, want an error with %q", err, c.err)
			}
		})
	}
}

// TestPairsPlan: every pair's suite is a plan `cnperf run` accepts: both
// workloads take its options, on both paths, with no baseline row.
func TestPairsPlan(t *testing.T) {
	if _, err := exec.LookPath("nginx"); err != nil {
		t.Skip("the http pair's server is nginx, not installed here")
	}
	c := Config{Rounds: 2, Duration: time.Second, Paths: []string{"loopback", "lab"}}
	for _, p := range Pairs {
		t.Run(p.Name, func(t *testing.T) {
			st := c.Suite(p)
			pl, err := plan.Build(plan.Request{SuiteDef: &st, NoBaseline: true, Pin: "0,1", Agent: []string{"cnperf", "agent"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(pl.Cases) != 2 || pl.Cases[0].Network != "container" || pl.Cases[1].Network != "host-gw" {
				t.Errorf("cases %v, want container same-pod then host-gw cross-host", pl.Cases)
			}
			if strings.Join(pl.Workloads, ",") != p.Ours+","+p.Reference || pl.Repeat != 2 {
				t.Errorf("workloads %v, %d rounds; want %s,%s and 2", pl.Workloads, pl.Repeat, p.Ours, p.Reference)
			}
		})
	}
}
