package plan_test

import (
	_ "github.com/cnperf/cnperf/internal/backend/all"    // the backends
	_ "github.com/cnperf/cnperf/internal/experiment/all" // the experiments
	_ "github.com/cnperf/cnperf/internal/netmode/all"    // the networks
	_ "github.com/cnperf/cnperf/internal/workload/all"   // the workloads
)
