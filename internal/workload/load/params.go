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
	"github.com/cnperf/cnperf/internal/workload"
)

func init() {
	for _, f := range []workload.Flag{
		{Name: "rate", Usage: "http_rate/tcp_rate: requests per second, a number or a comma list (a step each)"},
		{Name: "max-rate-search", Usage: "http_rate/tcp_rate: find the highest unsaturated rate, then run 20%,60%,100% of it", Bool: true},
		{Name: "server", Usage: "http_rate/http_qps: builtin or nginx (default builtin)"},
		{Name: "response-size", Usage: "http_rate/http_qps/tcp_rate: response bytes on the wire, a number or a comma list (default 350)"},
		{Name: "connections", Usage: "http_rate/tcp_rate/http_qps: connections the client opens (default 64 open loop, 16 closed loop)"},
		{Name: "threads", Usage: "http_rate/tcp_rate/http_qps: client worker threads (default: CPUs)"},
		{Name: "keepalive", Usage: "http_qps: --keepalive=false opens a new connection per request (default true)", Bool: true},
		{Name: "max-send-lag", Usage: "http_rate/tcp_rate: send-lag p99 above which a step is saturated (default 1ms)"},
		{Name: "realtime", Usage: "http_rate/tcp_rate/http_qps: client threads under SCHED_FIFO, no busy polling: sends on time on a busy machine (root)", Bool: true},
		{Name: "payload", Usage: "tcp_rate: zero (default) or sockperf: each request is a sockperf ping, so a sockperf server answers it"},
		{Name: "poll", Usage: "http_rate/tcp_rate: after each send, poll for the response this long instead of sleeping (e.g. 200us; default 0): a client thread that sleeps pays the CPU's wake-up on every response"},
		{Name: "latency-bound", Usage: "http_rate/tcp_rate --max-rate-search: p99 a sustained rate must stay under (default 10ms)"},
	} {
		workload.RegisterFlag(f)
	}
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
