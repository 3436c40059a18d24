package report

// The report reads the figures the workloads declare and draws the
// sections the experiments register: register them all, the runner's
// startup measurement included, as the cnperf binary does.
import (
	_ "github.com/cnperf/cnperf/internal/experiment/all"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)
