// Package load holds the seed-000 workloads on cnperf's load engine
// (internal/loadgen): http_rate and tcp_rate send requests at a constant
// rate (open loop) and measure latency from each request's intended send
// time; http_qps is closed loop, wrk style. The server half is the built-in
// fixed-size server or a real nginx.
package load

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/httpserver"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/workload"
)

// The options of the load workloads: Params.Extra keys, each a `cnperf
// run` flag. Open loop (http_rate, tcp_rate) and closed loop (http_qps)
// share most of them.
var (
	optRate = option.Spec{Name: "rate", Kind: option.List, Default: "1000",
		Help: "requests per second, a number or a comma list (a step each; 10k, 1.5M)"}
	optSearch = option.Spec{Name: "max-rate-search", Kind: option.Bool,
		Help: "find the highest unsaturated rate, then run 20%,60%,100% of it"}
	optServer = option.Spec{Name: "server", Kind: option.Enum, Values: []string{"builtin", "nginx"}, Default: "builtin",
		Help: "the server: cnperf's fixed-size one or a real nginx"}
	optSize = option.Spec{Name: "response-size", Kind: option.List, Default: "350",
		Help: "response bytes on the wire, a number or a comma list (a step each)"}
	optRawSize = option.Spec{Name: "response-size", Kind: option.List,
		Help: "response bytes, a number or a comma list (a step each; default: the message size)"}
	optOpenConns = option.Spec{Name: "connections", Kind: option.Int, Default: strconv.Itoa(defaultOpenConns),
		Help: "connections the client opens"}
	optQPSConns = option.Spec{Name: "connections", Kind: option.Int, Default: strconv.Itoa(defaultQPSConns),
		Help: "connections the client opens"}
	optThreads = option.Spec{Name: "threads", Kind: option.Int,
		Help: "client worker threads (default: CPUs)"}
	optKeepalive = option.Spec{Name: "keepalive", Kind: option.Bool, Default: "true",
		Help: "--keepalive=false opens a new connection per request"}
	optMaxLag = option.Spec{Name: "max-send-lag", Kind: option.Duration, Default: defaultMaxLag.String(),
		Help: "send-lag p99 above which a step is saturated"}
	optRealtime = option.Spec{Name: "realtime", Kind: option.Bool,
		Help: "client threads under SCHED_FIFO, no busy polling: sends on time on a busy machine (root)"}
	optPayload = option.Spec{Name: "payload", Kind: option.Enum, Values: []string{"zero", "sockperf"}, Default: "zero",
		Help: "sockperf: each request is a sockperf ping, so a sockperf server answers it"}
	optPoll = option.Spec{Name: "poll", Kind: option.Duration, Default: "0s",
		Help: "after each send, poll for the response this long instead of sleeping (e.g. 200us): a client thread that sleeps pays the CPU's wake-up on every response"}
	optLatBound = option.Spec{Name: "latency-bound", Kind: option.Duration, Default: defaultLatBound.String(),
		Help: "--max-rate-search: p99 a sustained rate must stay under"}
)

// Options implements workload.Optioned.
func (HTTPRate) Options() []option.Spec {
	return []option.Spec{optRate, optSearch, optServer, optSize, optOpenConns, optThreads, optMaxLag, optRealtime, optPoll, optLatBound}
}

// Options implements workload.Optioned.
func (TCPRate) Options() []option.Spec {
	return []option.Spec{optRate, optSearch, optRawSize, optOpenConns, optThreads, optMaxLag, optRealtime, optPayload, optPoll, optLatBound}
}

// Options implements workload.Optioned. http_qps is closed loop: it takes
// no --rate (a run of http_rate and http_qps together gives it to http_rate).
func (HTTPQPS) Options() []option.Spec {
	return []option.Spec{optServer, optSize, optQPSConns, optThreads, optKeepalive, optRealtime}
}

// CheckOptions implements workload.OptionChecker: the values parse.
func (w HTTPRate) CheckOptions(extra map[string]string) error { return checkOptions(w.k(), extra) }

// CheckOptions implements workload.OptionChecker.
func (w TCPRate) CheckOptions(extra map[string]string) error { return checkOptions(w.k(), extra) }

// CheckOptions implements workload.OptionChecker.
func (w HTTPQPS) CheckOptions(extra map[string]string) error { return checkOptions(w.k(), extra) }

func checkOptions(k kind, extra map[string]string) error {
	_, err := parseOpts(workload.Params{Extra: extra}, k.closed)
	return err
}

// opts are the parsed workload flags of one step.
type opts struct {
	rates        []uint64
	search       bool
	server       string
	sizes        []int
	connections  int
	threads      int
	keepalive    bool
	maxSendLag   time.Duration
	latencyBound time.Duration
	payload      string
	realtime     bool
	poll         time.Duration
}

const (
	defaultSize       = 350
	defaultOpenConns  = 64
	defaultQPSConns   = 16
	defaultRate       = 1000
	defaultMaxLag     = time.Millisecond
	defaultLatBound   = 10 * time.Millisecond
	maxRate           = 100_000_000
	maxConnections    = 1 << 20
	searchStartRate   = 1000
	searchMaxSteps    = 24
	searchResolution  = 1.1 // stop bisecting when hi/lo is below this
	searchStepSeconds = 1
)

func parseOpts(p workload.Params, closed bool) (opts, error) {
	o := opts{server: "builtin", keepalive: true, maxSendLag: defaultMaxLag, latencyBound: defaultLatBound}
	x := p.Extra
	var err error
	if v := x["rate"]; v != "" {
		if o.rates, err = parseRates(v); err != nil {
			return o, err
		}
	}
	if v := x["max-rate-search"]; v != "" {
		if o.search, err = strconv.ParseBool(v); err != nil {
			return o, fmt.Errorf("--max-rate-search %q: use true or false", v)
		}
	}
	if v := x["server"]; v != "" {
		if v != "builtin" && v != "nginx" {
			return o, fmt.Errorf("--server %q: use builtin or nginx", v)
		}
		o.server = v
	}
	if v := x["response-size"]; v != "" {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 || n > httpserver.MaxResponse {
				return o, fmt.Errorf("--response-size %q: use byte counts like 350,4096", v)
			}
			o.sizes = append(o.sizes, n)
		}
	}
	if len(o.sizes) == 0 {
		o.sizes = []int{p.MessageSize}
		if closed || p.MessageSize == 0 {
			o.sizes = []int{max(p.MessageSize, defaultSize)}
		}
	}
	o.connections = defaultOpenConns
	if closed {
		o.connections = defaultQPSConns
	}
	if v := x["connections"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxConnections {
			return o, fmt.Errorf("--connections %q: use 1 to %d", v, maxConnections)
		}
		o.connections = n
	}
	if v := x["threads"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1024 {
			return o, fmt.Errorf("--threads %q: use 1 to 1024", v)
		}
		o.threads = n
	}
	switch v := x["payload"]; v {
	case "", "zero", "sockperf":
		o.payload = v
	default:
		return o, fmt.Errorf("--payload %q: use zero or sockperf", v)
	}
	if v := x["realtime"]; v != "" {
		if o.realtime, err = strconv.ParseBool(v); err != nil {
			return o, fmt.Errorf("--realtime %q: use true or false", v)
		}
	}
	if v := x["keepalive"]; v != "" {
		if o.keepalive, err = strconv.ParseBool(v); err != nil {
			return o, fmt.Errorf("--keepalive %q: use true or false", v)
		}
	}
	for _, d := range []struct {
		key string
		dst *time.Duration
	}{{"max-send-lag", &o.maxSendLag}, {"latency-bound", &o.latencyBound}} {
		if v := x[d.key]; v != "" {
			t, err := time.ParseDuration(v)
			if err != nil || t <= 0 {
				return o, fmt.Errorf("--%s %q: use a duration like 1ms", d.key, v)
			}
			*d.dst = t
		}
	}
	if v := x["poll"]; v != "" {
		t, err := time.ParseDuration(v)
		if err != nil || t < 0 || t > time.Second {
			return o, fmt.Errorf("--poll %q: use a duration from 0 to 1s, like 200us", v)
		}
		o.poll = t
	}
	return o, nil
}

// parseRates reads "20000" or "10000,50k,1.5M".
func parseRates(v string) ([]uint64, error) {
	var out []uint64
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		mult := 1.0
		switch {
		case strings.HasSuffix(f, "k"), strings.HasSuffix(f, "K"):
			mult, f = 1e3, f[:len(f)-1]
		case strings.HasSuffix(f, "M"):
			mult, f = 1e6, f[:len(f)-1]
		}
		x, err := strconv.ParseFloat(f, 64)
		r := x * mult
		if err != nil || r < 1 || r > maxRate || r != float64(uint64(r)) {
			return nil, fmt.Errorf("--rate %q: use whole requests per second from 1 to %d, e.g. 20000 or 10k,50k", v, maxRate)
		}
		out = append(out, uint64(r))
	}
	return out, nil
}
