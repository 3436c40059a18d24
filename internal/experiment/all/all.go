// Package all registers every experiment.
package all

import (
	_ "github.com/cnperf/cnperf/internal/experiment/alltoall"   // alltoall
	_ "github.com/cnperf/cnperf/internal/experiment/blocking"   // blocking
	_ "github.com/cnperf/cnperf/internal/experiment/density"    // density
	_ "github.com/cnperf/cnperf/internal/experiment/neighbours" // neighbours
	_ "github.com/cnperf/cnperf/internal/experiment/pairs"      // pairs
	_ "github.com/cnperf/cnperf/internal/experiment/parallel"   // parallel
	_ "github.com/cnperf/cnperf/internal/experiment/services"   // services
	_ "github.com/cnperf/cnperf/internal/experiment/sizes"      // sizes
	_ "github.com/cnperf/cnperf/internal/experiment/startup"    // startup
)
