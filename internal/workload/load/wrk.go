package load

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

func init() { workload.Register(Wrk{}) }

// Wrk is the reference http_qps is held against: wrk's closed loop, with
// http_qps's connections and threads, against the same server (http_qps's:
// the built-in one or nginx). `cnperf bench engine` runs the two head to
// head.
type Wrk struct{}

func (Wrk) k() kind { return kind{http: true, closed: true} }

// Name implements workload.Workload.
func (Wrk) Name() string { return "wrk_http" }

// HTTP implements workload.HTTP.
func (Wrk) HTTP() bool { return true }

// Summary implements workload.Workload.
func (Wrk) Summary() string {
	return "reference: wrk's closed-loop HTTP load (-c connections, -t threads) against http_qps's server, on the same path"
}

// Proto implements workload.Workload.
func (Wrk) Proto() string { return "tcp" }

// Figures implements workload.Workload: as http_qps's that wrk reports.
func (Wrk) Figures() []result.Figure {
	f := []result.Figure{result.FigTransactions}
	f[0].Label = "req/s"
	return append(f, result.FigLatency("p50"), result.FigLatency("p99"), result.FigCPUPerTrans)
}

// Options implements workload.Optioned: http_qps's, but for keep-alive
// (wrk keeps its connections) and the real-time client.
func (Wrk) Options() []option.Spec { return []option.Spec{optServer, optSize, optQPSConns, optThreads} }

// CheckOptions implements workload.OptionChecker.
func (w Wrk) CheckOptions(extra map[string]string) error { return checkOptions(w.k(), extra) }

// Defaults implements workload.Workload.
func (Wrk) Defaults(p *workload.Params) { defaults(p, defaultSize) }

// Validate implements workload.Workload.
func (w Wrk) Validate(p workload.Params) error {
	if p.Duration < time.Second {
		return fmt.Errorf("wrk runs whole seconds; use --duration 1s or more")
	}
	return validate(w.k(), p)
}

// Serve implements workload.Workload: http_qps's server.
func (w Wrk) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	return serve(ctx, w.k(), p, ready)
}

// Run implements workload.Workload.
func (w Wrk) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	o, err := parseOpts(p, true)
	if err != nil {
		return workload.Report{}, err
	}
	threads := o.threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	threads = min(threads, o.connections) // wrk wants a connection per thread at least
	argv := []string{"wrk", "-t" + strconv.Itoa(threads), "-c" + strconv.Itoa(o.connections),
		"-d" + strconv.Itoa(int(p.Duration.Round(time.Second).Seconds())) + "s", "--latency", "http://" + addr.String() + "/"}
	if _, err := exec.LookPath("wrk"); err != nil {
		return workload.Report{}, fmt.Errorf("wrk is not installed (apt-get install wrk)")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return workload.Report{}, fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()+" "+string(out)))
	}
	return ParseWrk(out)
}

var (
	wrkTotal   = regexp.MustCompile(`(?m)^\s*(\d+) requests in ([0-9.]+)(us|ms|s|m),`)
	wrkQuant   = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+)(us|ms|s)\s*$`)
	wrkErrors  = regexp.MustCompile(`(?m)Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	wrkNon2xx  = regexp.MustCompile(`(?m)Non-2xx or 3xx responses: (\d+)`)
	wrkSeconds = map[string]float64{"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60}
)

// ParseWrk reads wrk --latency's text: the requests and the time they took,
// the p50 and p99 latency (µs, in Extra as p50_us, p99_us) and the errors.
func ParseWrk(out []byte) (workload.Report, error) {
	m := wrkTotal.FindSubmatch(out)
	if m == nil {
		return workload.Report{}, fmt.Errorf("reading wrk output: no \"N requests in T\" line: %q", firstLine(out))
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	secs, _ := strconv.ParseFloat(string(m[2]), 64)
	r := workload.Report{Transactions: n, Seconds: secs * wrkSeconds[string(m[3])], Extra: map[string]float64{}}
	for _, q := range wrkQuant.FindAllSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(string(q[2]), 64)
		r.Extra["p"+string(q[1])+"_us"] = v * wrkSeconds[string(q[3])] * 1e6
	}
	if e := wrkErrors.FindSubmatch(out); e != nil {
		for _, s := range e[1:] {
			v, _ := strconv.ParseInt(string(s), 10, 64)
			r.Errors += v
		}
	}
	if e := wrkNon2xx.FindSubmatch(out); e != nil {
		v, _ := strconv.ParseInt(string(e[1]), 10, 64)
		r.Errors += v
	}
	return r, nil
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// Metrics implements workload.Workload.
func (Wrk) Metrics(_ workload.Params, c, _ workload.Report) (result.Metrics, string, error) {
	if c.Transactions == 0 || c.Seconds == 0 {
		return result.Metrics{}, "", fmt.Errorf("wrk: no request was answered (%d errors); is the server up?", c.Errors)
	}
	m := result.Metrics{
		TransactionsPerS: result.F(float64(c.Transactions) / c.Seconds),
		Transactions:     result.I(c.Transactions),
		DurationS:        result.F(c.Seconds),
		LatencyUs:        map[string]float64{},
	}
	for _, q := range []string{"p50", "p99"} {
		if v, ok := c.Extra[q+"_us"]; ok {
			m.LatencyUs[q] = v
		}
	}
	if c.Errors > 0 {
		m.Errors = result.I(c.Errors)
	}
	return m, "", nil
}
