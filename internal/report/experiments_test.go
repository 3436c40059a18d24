package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

// A sweep's reference cells differ only by their step: the noise line
// names it, else it lists "tcp_stream same-host Gbit/s" once per size.
func TestNoiseNamesTheStep(t *testing.T) {
	run := &result.Run{}
	for i, size := range []string{"size=64", "size=65507"} {
		run.Summaries = append(run.Summaries, result.Summary{
			Cell:   result.CellKey{Network: "baseline", Placement: "same-host", Workload: "tcp_stream", Step: size},
			Figure: result.KeyThroughput, N: 3, Median: 1e9, CV: 0.05 * float64(i+1)})
	}
	var b bytes.Buffer
	noise(&b, run)
	for _, want := range []string{"tcp_stream same-host size=64 Gbit/s 5.0%", "tcp_stream same-host size=65507 Gbit/s 10.0%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in %q", want, b.String())
		}
	}
}
