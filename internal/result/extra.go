package result

// Keys of Metrics.Extra: the figures a workload or the runner records
// beside the typed ones. Writers and readers both use these names, so a
// report never guesses a string; the JSON text is the key itself. A
// figure names one as "extra.KEY" (see Metrics.Value).
const (
	// open-loop load (http_rate, tcp_rate)
	ExtraTargetRPS   = "target_rps"   // the rate asked for
	ExtraAchievedRPS = "achieved_rps" // the rate the schedule kept
	ExtraSaturated   = "saturated"    // 1 when the step did not hold its rate: its latency is not valid
	ExtraConnsBusy   = "conns_busy_pct"
	ExtraScheduled   = "scheduled"
	ExtraUnsent      = "unsent"
	ExtraTimeouts    = "timeouts"
	// load workloads
	ExtraSamples  = "samples"  // latency samples behind the percentiles
	ExtraConnects = "connects" // connections opened
	// udp_stream
	ExtraSentMessages = "sent_messages"
	ExtraSentBps      = "sent_bps"
	// services
	ExtraSyncS = "sync_s" // time to program the services on every node
	// the runner's per-cell costs
	ExtraDaemonCPU       = "daemon_cpu_s_per_s"        // user-space datapath daemons (flannel-udp, weave)
	ExtraIfaceRxBytes    = "iface_rx_bytes"            // bytes the server pod's interface received
	ExtraIfaceRxPerBytes = "iface_rx_per_payload_byte" // of those, per payload byte
	// parallel flows (measure.Spec.Flows)
	ExtraFlows   = "flows"         // flows run at once
	ExtraJain    = "fairness_jain" // Jain's index over the flows' main figure
	ExtraFlowMin = "flow_min"      // the smallest flow's main figure
	ExtraFlowMax = "flow_max"      // the largest flow's main figure
	// noisy neighbours, on a result measured beside them
	ExtraNeighbourCPU = "neighbour_cpu_s_per_s" // CPU the neighbours' cgroups used, CPU-s per s
	ExtraQuiet        = "quiet_value"           // the main figure without them, same round
	ExtraDropPct      = "drop_pct"              // how much worse than quiet, % (negative: better)
	// startup
	ExtraVsNoNetwork = "vs_no_network"
	ExtraNoNetworkMs = "no_network_ms"
	// blocking (seed 002): the balancer's times to one backend, from its
	// access log; latency_us holds the header time (mean, percentiles)
	ExtraConnectMean    = "connect_mean_us"       // $upstream_connect_time, mean
	ExtraBlockingSE     = "blocking_se_us"        // standard error of the mean header time
	ExtraBlockingDiff   = "blocking_diff_us"      // mean header time minus the baseline's, same placement and round
	ExtraBlockingDiffCI = "blocking_diff_ci95_us" // half-width of its 95 % interval from the round's requests
	ExtraConnectDiff    = "connect_diff_us"       // mean connect time minus the baseline's
	ExtraLBRequest      = "lb_request_mean_us"    // nginx's $request_time, mean
	ExtraShare          = "share"                 // this backend's share of the balancer's requests
	ExtraClientMean     = "client_mean_us"        // the client's own mean latency (every backend)
	ExtraClientP99      = "client_p99_us"
	ExtraClientRate     = "client_rps"       // requests/s the client kept (every backend)
	ExtraClientSat      = "client_saturated" // 1: the client could not keep its rate
	ExtraLogUnparsed    = "log_lines_unparsed"
)

// ExtraInsignificant is the key set to 1 when too few samples back the
// latency percentile named pct ("p99.999").
func ExtraInsignificant(pct string) string { return "insignificant_" + pct }

// ExtraVsLB is the % difference of a service result's rate to the same
// cell through load balancer lb ("vs_iptables_pct").
func ExtraVsLB(lb string) string { return "vs_" + lb + "_pct" }

// ExtraQuantileUs is a quantile of a further distribution, in µs:
// ExtraQuantileUs("send_lag", "p99") is "send_lag_p99_us".
func ExtraQuantileUs(dist, q string) string { return dist + "_" + q + "_us" }

// ExtraSetupPhaseMs is the time of a start-up phase of the network's
// setup ("setup_control_plane_ms").
func ExtraSetupPhaseMs(phase string) string { return "setup_" + phase + "_ms" }

// ExtraKey is the Metrics.Value key of an Extra entry: "extra.KEY".
func ExtraKey(key string) string { return "extra." + key }

// Keys of Params.Extra (and so of Result.Params) that the load workloads'
// steps set and reports read.
const (
	ParamKeepalive    = "keepalive"     // http_qps: "false" opens a connection per request
	ParamResponseSize = "response-size" // the step's response size
	ParamRate         = "rate"          // the step's rate
	ParamPhase        = "phase"         // "search" or "ladder" of a --max-rate-search
	ParamMaxRate      = "max_rate"      // a ladder step's searched maximum
	ParamLoad         = "load"          // a ladder step's share of it ("20%")
	ParamMaxSendLag   = "max-send-lag"  // send-lag p99 above which a step is saturated
	ParamDuration     = "duration_s"    // the step's length, seconds
)
