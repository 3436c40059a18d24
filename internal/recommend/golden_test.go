package recommend

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/result"
)

// TestGoldenRecommend locks `cnperf recommend` on the stored run files
// (internal/report/testdata, real runs; services_ipvs partly made, see its
// README) for every profile, and with constraints.
func TestGoldenRecommend(t *testing.T) {
	for _, c := range []struct {
		file, profile, constraints, golden string
	}{
		{"summaries", "latency", "", "summaries.latency"},
		{"summaries", "throughput", "", "summaries.throughput"},
		{"summaries", "mixed", "", "summaries.mixed"},
		{"summaries", "throughput", "encryption,cloud-route-limit=50", "summaries.throughput-encryption"},
		{"summaries", "short-connections", "", "summaries.short-connections"},
		{"rr_stream_repeat", "short-connections", "", "rr_stream_repeat.short-connections"},
		{"services_ipvs", "many-services", "", "services_ipvs.many-services"},
		{"services_ipvs", "many-services", "no-l2-adjacency", "services_ipvs.many-services-no-l2"},
		{"startup", "latency", "", "startup.latency"},
		{"cell_cost", "latency", "", "cell_cost.latency"},
		{"cell_cost", "throughput", "", "cell_cost.throughput"},
	} {
		t.Run(c.golden, func(t *testing.T) {
			run, err := result.Read(filepath.Join("..", "report", "testdata", c.file+".json"))
			if err != nil {
				t.Fatal(err)
			}
			cons, err := ParseConstraints(c.constraints)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := Rank(run, c.profile, cons)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			Write(&b, rs)
			golden.Check(t, c.golden, b.String())
		})
	}
}
