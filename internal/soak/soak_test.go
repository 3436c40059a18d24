package soak

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/backend/labbackend"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/measure"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

var (
	duration = flag.Duration("soak.duration", 2*time.Minute, "how long the soak measures, round after round (30m by hand)")
	network  = flag.String("soak.network", "bridge", "the network the soak's pods are on")
	samples  = flag.String("soak.samples", "", "write every sample (round, pod, RSS, descriptors, goroutines) to this CSV file")
)

func TestMain(m *testing.M) { labtest.Main(m) }

// The bounds of flat: descriptors and goroutines are counts that a leak
// per measurement raises by one or more every round, so a small absolute
// margin; resident memory moves with the garbage collector, so a relative
// one plus a few MB.
var bounds = map[string]Bound{
	"rss_bytes":  {Abs: 4 << 20, Rel: 0.25},
	"fds":        {Abs: 2},
	"goroutines": {Abs: 3},
}

// TestSoak measures one lab round after round for -soak.duration — a
// request-response, a connection-per-transaction and a UDP stream workload
// each round, every one on a fresh port — and samples both agents after
// every round; their memory, descriptors and goroutines must stay flat.
func TestSoak(t *testing.T) {
	labtest.NeedRoot(t)
	id := "soak" + lab.NewID()
	b := labbackend.New(lab.Config{ID: id}, []string{labtest.AgentBinary(t), "agent"}, t.Logf)
	if err := b.Check(*network); err != nil {
		t.Skipf("this machine cannot build %s: %v", *network, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *duration+5*time.Minute)
	defer cancel()
	topo := backend.Topology{Network: *network, Hosts: 1, Pods: []backend.PodSpec{
		{Name: "c1", Host: 1, CPU: -1}, {Name: "s1", Host: 1, CPU: -1}}}
	d, err := b.Deploy(ctx, topo)
	if err != nil {
		t.Fatal(err)
	}
	defer labtest.AssertClean(t, id)
	defer func() {
		if err := d.Teardown(); err != nil {
			t.Error(err)
		}
	}()
	var csv *os.File
	if *samples != "" {
		if csv, err = os.Create(*samples); err != nil {
			t.Fatal(err)
		}
		defer csv.Close()
		fmt.Fprintln(csv, "round,elapsed_s,pod,rss_bytes,fds,goroutines")
	}
	series := map[string][]float64{}
	port := 5201
	start := time.Now()
	rounds := 0
	for time.Since(start) < *duration || rounds < 6 {
		rounds++
		for _, name := range []string{"tcp_rr", "tcp_crr", "udp_stream"} {
			w, err := workload.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			p := workload.Params{Duration: 300 * time.Millisecond, Port: port}
			w.Defaults(&p)
			if port++; port > 60000 {
				port = 5201
			}
			res := measure.Measure(ctx, d, measure.Spec{Workload: w, Params: p, Client: "c1", Servers: []string{"s1"}})
			if res.Error != "" {
				t.Fatalf("round %d %s: %s", rounds, name, res.Error)
			}
		}
		for _, pod := range []string{"c1", "s1"} {
			st, err := d.Pod(pod).Agent.Stats(ctx)
			if err != nil {
				t.Fatalf("round %d: %v", rounds, err)
			}
			series[pod+" rss_bytes"] = append(series[pod+" rss_bytes"], float64(st.RSSBytes))
			series[pod+" fds"] = append(series[pod+" fds"], float64(st.FDs))
			series[pod+" goroutines"] = append(series[pod+" goroutines"], float64(st.Goroutines))
			if csv != nil {
				fmt.Fprintf(csv, "%d,%.1f,%s,%d,%d,%d\n", rounds, time.Since(start).Seconds(), pod, st.RSSBytes, st.FDs, st.Goroutines)
			}
		}
	}
	t.Logf("%d rounds in %v", rounds, time.Since(start).Round(time.Second))
	for _, pod := range []string{"c1", "s1"} {
		for _, what := range []string{"rss_bytes", "fds", "goroutines"} {
			s := series[pod+" "+what]
			third := len(s) / 3
			t.Logf("%s %s: first third median %.0f, last third median %.0f, max %.0f",
				pod, what, stats.Median(s[:third]), stats.Median(s[len(s)-third:]), maxOf(s))
			if err := Flat(pod+" "+what, s, bounds[what]); err != nil {
				t.Error(err)
			}
		}
	}
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
