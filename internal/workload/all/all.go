// Package all registers every workload; import it for its side effects.
package all

import (
	_ "github.com/cnperf/cnperf/internal/workload/alltoall"  // alltoall
	_ "github.com/cnperf/cnperf/internal/workload/bulk"      // tcp_bulk
	_ "github.com/cnperf/cnperf/internal/workload/load"      // http_rate, tcp_rate, http_qps, wrk_http
	_ "github.com/cnperf/cnperf/internal/workload/reference" // iperf3_tcp, iperf2_tcp, nuttcp_tcp, sockperf_tcp
	_ "github.com/cnperf/cnperf/internal/workload/rr"        // tcp_rr, udp_rr, tcp_crr
	_ "github.com/cnperf/cnperf/internal/workload/spin"      // spin (noisy neighbours)
	_ "github.com/cnperf/cnperf/internal/workload/stream"    // tcp_stream, udp_stream
)
