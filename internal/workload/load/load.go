package load

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/httpserver"
	"github.com/cnperf/cnperf/internal/loadgen"
	"github.com/cnperf/cnperf/internal/nginx"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/tmpdir"
	"github.com/cnperf/cnperf/internal/workload"
)

func init() {
	workload.Register(HTTPRate{})
	workload.Register(TCPRate{})
	workload.Register(HTTPQPS{})
}

// kind is what distinguishes the three workloads.
type kind struct {
	http   bool
	closed bool
}

// HTTPRate is the seed-000 experiment: HTTP/1.1 GETs at a constant rate.
type HTTPRate struct{}

// TCPRate sends fixed-size raw TCP requests at a constant rate.
type TCPRate struct{}

// HTTPQPS is closed-loop HTTP load, wrk style.
type HTTPQPS struct{}

func (HTTPRate) k() kind { return kind{http: true} }
func (TCPRate) k() kind  { return kind{} }
func (HTTPQPS) k() kind  { return kind{http: true, closed: true} }

// Name implements workload.Workload.
func (HTTPRate) Name() string { return "http_rate" }

// Name implements workload.Workload.
func (TCPRate) Name() string { return "tcp_rate" }

// Name implements workload.Workload.
func (HTTPQPS) Name() string { return "http_qps" }

// HTTP implements workload.HTTP.
func (HTTPRate) HTTP() bool { return true }

// HTTP implements workload.HTTP.
func (HTTPQPS) HTTP() bool { return true }

// Variants: through a service, both short and keep-alive connections
// (seed 003), unless --keepalive chose one.
func (HTTPQPS) Variants() []map[string]string {
	return []map[string]string{{"keepalive": "false"}, {"keepalive": "true"}}
}

// Summary implements workload.Workload.
func (HTTPRate) Summary() string {
	return "HTTP GETs at a constant rate (open loop, seed 000): latency p50..p99.999 from the intended send time"
}

// Summary implements workload.Workload.
func (TCPRate) Summary() string {
	return "raw TCP requests at a constant rate (open loop): corrected latency percentiles to p99.999"
}

// Summary implements workload.Workload.
func (HTTPQPS) Summary() string {
	return "closed-loop HTTP load, wrk style: requests/s and latency; --keepalive=false for short connections"
}

// Figures implements workload.Workload: the seed-000 table's columns,
// the achieved rate, the latency spectrum to p99.999 and max (not valid,
// so absent, when the step was saturated) and whether the step held.
func (HTTPRate) Figures() []result.Figure { return openFigures() }

// Figures implements workload.Workload.
func (TCPRate) Figures() []result.Figure { return openFigures() }

// Figures implements workload.Workload: requests/s (with its ratio),
// latency and errors.
func (HTTPQPS) Figures() []result.Figure {
	f := []result.Figure{result.FigTransactions}
	f[0].Label = "req/s"
	for _, q := range []string{"p50", "p99", "p99.9", "max"} {
		f = append(f, result.FigLatency(q))
	}
	return append(f, result.Figure{Key: result.KeyErrors, Label: "errors", Better: result.LowerBetter, Kind: result.KindCount, ZeroIfAbsent: true},
		result.FigCPUPerTrans)
}

func openFigures() []result.Figure {
	f := []result.Figure{{Key: result.ExtraKey(result.ExtraAchievedRPS), Label: "rate/s", Unit: "1/s", Better: result.HigherBetter, Kind: result.KindRate}}
	for _, q := range hist.TailPercentiles {
		f = append(f, result.FigLatency(q.Key))
	}
	return append(f, result.FigLatency("max"),
		result.Figure{Key: result.ExtraKey(result.ExtraSamples), Label: "samples", Better: result.HigherBetter, Kind: result.KindCount},
		result.Figure{Key: result.ExtraKey(result.ExtraSaturated), Label: "saturated", Better: result.LowerBetter, Kind: result.KindFlag},
		result.FigCPUPerTrans)
}

// Connections implements workload.ConnectionUser: short or long as
// --keepalive says.
func (HTTPQPS) Connections(extra map[string]string) workload.Connections {
	switch extra[result.ParamKeepalive] {
	case "false":
		return workload.Connections{Style: "short"}
	case "true":
		return workload.Connections{Style: "long"}
	}
	return workload.Connections{}
}

// Proto implements workload.Workload.
func (HTTPRate) Proto() string { return "tcp" }

// Proto implements workload.Workload.
func (TCPRate) Proto() string { return "tcp" }

// Proto implements workload.Workload.
func (HTTPQPS) Proto() string { return "tcp" }

// Defaults implements workload.Workload. For HTTP the message size is the
// response size on the wire; for tcp_rate it is the request size (and the
// response size unless --response-size says otherwise).
func (HTTPRate) Defaults(p *workload.Params) { defaults(p, defaultSize) }

// Defaults implements workload.Workload.
func (TCPRate) Defaults(p *workload.Params) { defaults(p, 16) }

// Defaults implements workload.Workload.
func (HTTPQPS) Defaults(p *workload.Params) { defaults(p, defaultSize) }

func defaults(p *workload.Params, size int) {
	if p.MessageSize == 0 {
		p.MessageSize = size
	}
	if p.Duration == 0 {
		p.Duration = 5 * time.Second
	}
}

// Validate implements workload.Workload.
func (w HTTPRate) Validate(p workload.Params) error { return validate(w.k(), p) }

// Validate implements workload.Workload.
func (w TCPRate) Validate(p workload.Params) error { return validate(w.k(), p) }

// Validate implements workload.Workload.
func (w HTTPQPS) Validate(p workload.Params) error { return validate(w.k(), p) }

func validate(k kind, p workload.Params) error {
	if p.Direction != "" && p.Direction != "up" {
		return errors.New("load workloads have no direction; drop --direction")
	}
	minSize := 1
	if k.http {
		minSize = httpserver.HeaderSize + 1
	}
	if err := workload.ValidateCommon(p, minSize, httpserver.MaxResponse); err != nil {
		return err
	}
	o, err := parseOpts(p, k.closed)
	if err != nil {
		return err
	}
	for _, s := range o.sizes {
		if k.http && s <= httpserver.HeaderSize {
			return fmt.Errorf("--response-size %d: an HTTP response needs more than %d bytes (%d of headers)", s, httpserver.HeaderSize, httpserver.HeaderSize)
		}
	}
	// http_qps ignores --rate and --max-rate-search, so that one run can
	// take http_rate and http_qps together; `cnperf load http_qps` refuses them.
	if !k.closed && !o.keepalive {
		return errors.New("open-loop workloads keep connections alive; use http_qps --keepalive=false for short connections")
	}
	if o.payload == "sockperf" && (k.http || p.MessageSize < sockperfHeader) {
		return fmt.Errorf("--payload sockperf is for tcp_rate with --message-size of at least %d (sockperf's header)", sockperfHeader)
	}
	if !k.http && o.server == "nginx" {
		return errors.New("tcp_rate speaks raw TCP; nginx serves HTTP: use http_rate --server nginx")
	}
	if o.server == "nginx" {
		if _, err := nginx.Binary(); err != nil {
			return err
		}
	}
	return nil
}

// Serve implements workload.Workload.
func (w HTTPRate) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	return serve(ctx, w.k(), p, ready)
}

// Serve implements workload.Workload.
func (w TCPRate) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	return serve(ctx, w.k(), p, ready)
}

// Serve implements workload.Workload.
func (w HTTPQPS) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	return serve(ctx, w.k(), p, ready)
}

func serve(ctx context.Context, k kind, p workload.Params, ready func()) (workload.Report, error) {
	o, err := parseOpts(p, k.closed)
	if err != nil {
		return workload.Report{}, err
	}
	size := o.sizes[0]
	addr := fmt.Sprintf(":%d", p.Port)
	switch {
	case !k.http:
		s, err := httpserver.ListenRaw(addr, p.MessageSize, size)
		if err != nil {
			return workload.Report{}, err
		}
		ready()
		s.Serve(ctx)
	case o.server == "nginx":
		dir, cleanup, err := stateDir(p.Port)
		if err != nil {
			return workload.Report{}, err
		}
		defer cleanup()
		s, err := nginx.Start(ctx, nginx.Options{Dir: dir, Port: p.Port, BodySize: size - httpserver.HeaderSize})
		if err != nil {
			return workload.Report{}, err
		}
		ready()
		<-ctx.Done()
		s.Stop()
	default:
		s, err := httpserver.ListenHTTP(addr, size)
		if err != nil {
			return workload.Report{}, err
		}
		ready()
		s.Serve(ctx)
	}
	return workload.Report{}, nil
}

// stateDir is where nginx keeps its configuration and file: in the lab's
// state folder when this is an agent started by the lab (its control socket
// lives there), else a temporary folder removed afterwards.
func stateDir(port int) (string, func(), error) {
	for i, a := range os.Args {
		if (a == "--listen" || a == "-listen") && i+1 < len(os.Args) && strings.HasPrefix(os.Args[i+1], "unix:") {
			dir := filepath.Join(filepath.Dir(strings.TrimPrefix(os.Args[i+1], "unix:")), fmt.Sprintf("nginx-%d", port))
			if err := os.MkdirAll(dir, 0o755); err == nil {
				return dir, func() {}, nil
			}
		}
	}
	dir, err := tmpdir.Make("nginx")
	if err != nil {
		return "", nil, fmt.Errorf("nginx state folder: %w", err)
	}
	_ = os.Chmod(dir, 0o755)
	return dir, func() { os.RemoveAll(dir) }, nil
}

// Run implements workload.Workload.
func (w HTTPRate) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	return run(ctx, w.k(), p, addr)
}

// Run implements workload.Workload.
func (w TCPRate) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	return run(ctx, w.k(), p, addr)
}

// Run implements workload.Workload.
func (w HTTPQPS) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	return run(ctx, w.k(), p, addr)
}

// config builds the engine configuration of one step.
func config(k kind, p workload.Params, addr netip.AddrPort) (loadgen.Config, error) {
	o, err := parseOpts(p, k.closed)
	if err != nil {
		return loadgen.Config{}, err
	}
	c := loadgen.Config{
		Addr: addr, Duration: p.Duration, Connections: o.connections, Threads: o.threads,
		KeepAlive: o.keepalive, MaxSendLag: o.maxSendLag, Realtime: o.realtime, Poll: o.poll,
	}
	if k.http {
		host := p.Extra["host"]
		if host == "" {
			host = addr.String()
		}
		c.Protocol = loadgen.HTTP
		c.Request = loadgen.HTTPRequest(host, p.Extra["path"], !o.keepalive)
	} else {
		c.Protocol = loadgen.Raw
		c.Request = make([]byte, p.MessageSize)
		c.ResponseSize = o.sizes[0]
		if o.payload == "sockperf" {
			c.Request = SockperfPing(p.MessageSize)
			c.ResponseSize = p.MessageSize // sockperf echoes the message
		}
	}
	if !k.closed {
		c.Rate = defaultRate
		if len(o.rates) > 0 {
			c.Rate = o.rates[0]
		}
	}
	return c, nil
}

func run(ctx context.Context, k kind, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	c, err := config(k, p, addr)
	if err != nil {
		return workload.Report{}, err
	}
	r, err := loadgen.Run(ctx, c)
	if err != nil {
		return workload.Report{}, err
	}
	return Report(r)
}

// Report turns an engine result into a workload report, histograms encoded
// so that reports of several agents merge exactly.
func Report(r *loadgen.Result) (workload.Report, error) {
	rep := workload.Report{
		Transactions: r.Completed, Errors: r.Errors, Seconds: r.Seconds,
		Extra: map[string]float64{
			result.ExtraConnects: float64(r.Connects),
			"workers":            float64(r.Workers),
		},
	}
	var err error
	if rep.Histogram, err = r.Latency.Encode(); err != nil {
		return rep, err
	}
	if r.Target > 0 {
		rep.Extra[result.ExtraTargetRPS] = float64(r.Target)
		rep.Extra[result.ExtraScheduled] = float64(r.Scheduled)
		rep.Extra[result.ExtraUnsent] = float64(r.Unsent)
		rep.Extra[result.ExtraTimeouts] = float64(r.Timeouts)
		rep.Extra["conns_busy_s"] = r.ConnsBusy.Seconds()
		rep.Histograms = map[string]string{}
		for name, h := range map[string]*hist.H{"uncorrected": r.Uncorrected, "send_lag": r.SendLag} {
			if rep.Histograms[name], err = h.Encode(); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// Merge combines the client reports of several agents into one, exactly:
// counts add up and histograms merge sample for sample.
func Merge(reps ...workload.Report) (workload.Report, error) {
	var out workload.Report
	hs := map[string]*hist.H{}
	add := func(name, enc string) error {
		if enc == "" {
			return nil
		}
		h, err := hist.Decode(enc)
		if err != nil {
			return err
		}
		if hs[name] == nil {
			hs[name] = h
		} else {
			hs[name].Merge(h)
		}
		return nil
	}
	for _, r := range reps {
		out.Transactions += r.Transactions
		out.Errors += r.Errors
		out.CPUSeconds += r.CPUSeconds
		out.Seconds = max(out.Seconds, r.Seconds)
		for k, v := range r.Extra {
			if out.Extra == nil {
				out.Extra = map[string]float64{}
			}
			out.Extra[k] += v // every extra of these workloads is a count or a rate: they add up
		}
		if err := add("", r.Histogram); err != nil {
			return out, err
		}
		for k, v := range r.Histograms {
			if err := add(k, v); err != nil {
				return out, err
			}
		}
	}
	for name, h := range hs {
		enc, err := h.Encode()
		if err != nil {
			return out, err
		}
		if name == "" {
			out.Histogram = enc
			continue
		}
		if out.Histograms == nil {
			out.Histograms = map[string]string{}
		}
		out.Histograms[name] = enc
	}
	return out, nil
}

// Metrics implements workload.Workload.
func (w HTTPRate) Metrics(p workload.Params, c, s workload.Report) (result.Metrics, string, error) {
	return metrics(w.k(), p, c)
}

// Metrics implements workload.Workload.
func (w TCPRate) Metrics(p workload.Params, c, s workload.Report) (result.Metrics, string, error) {
	return metrics(w.k(), p, c)
}

// Metrics implements workload.Workload.
func (w HTTPQPS) Metrics(p workload.Params, c, s workload.Report) (result.Metrics, string, error) {
	return metrics(w.k(), p, c)
}

func metrics(k kind, p workload.Params, c workload.Report) (result.Metrics, string, error) {
	if c.Transactions == 0 {
		return result.Metrics{}, "", fmt.Errorf("no request was answered (%d errors); is the server up?", c.Errors)
	}
	o, err := parseOpts(p, k.closed)
	if err != nil {
		return result.Metrics{}, "", err
	}
	h, err := hist.Decode(c.Histogram)
	if err != nil {
		return result.Metrics{}, "", err
	}
	m := result.Metrics{
		TransactionsPerS: result.F(float64(c.Transactions) / c.Seconds),
		Transactions:     result.I(c.Transactions),
		DurationS:        result.F(c.Seconds),
		LatencyUs:        h.Summary(hist.TailPercentiles),
		Extra:            map[string]float64{result.ExtraSamples: float64(h.Count())},
	}
	m.LatencyUs["mean"] = float64(h.Mean()) / 1e3
	for _, q := range hist.TailPercentiles {
		if !h.Significant(q.Q) {
			m.Extra[result.ExtraInsignificant(q.Key)] = 1
		}
	}
	if c.Errors > 0 {
		m.Errors = result.I(c.Errors)
	}
	if v, ok := c.Extra[result.ExtraConnects]; ok {
		m.Extra[result.ExtraConnects] = v
	}
	if k.closed {
		return m, c.Histogram, nil
	}
	r := &loadgen.Result{Target: uint64(c.Extra[result.ExtraTargetRPS]), Seconds: c.Seconds, Completed: c.Transactions,
		SendLag: hist.New(), Uncorrected: hist.New()}
	if enc := c.Histograms["send_lag"]; enc != "" {
		if r.SendLag, err = hist.Decode(enc); err != nil {
			return m, "", err
		}
	}
	if enc := c.Histograms["uncorrected"]; enc != "" {
		if r.Uncorrected, err = hist.Decode(enc); err != nil {
			return m, "", err
		}
	}
	sat, _ := r.Saturated(o.maxSendLag)
	m.Extra[result.ExtraTargetRPS] = float64(r.Target)
	m.Extra[result.ExtraAchievedRPS] = r.Achieved()
	m.Extra[result.ExtraSaturated] = b2f(sat)
	for _, key := range []string{result.ExtraScheduled, result.ExtraUnsent, result.ExtraTimeouts} {
		m.Extra[key] = c.Extra[key]
	}
	if wk := c.Extra["workers"]; wk > 0 && c.Seconds > 0 {
		// the share of the time a request was due with every connection of
		// its worker busy: lag the server caused, not the client
		m.Extra[result.ExtraConnsBusy] = 100 * c.Extra["conns_busy_s"] / (wk * c.Seconds)
	}
	for _, x := range []struct {
		name string
		h    *hist.H
	}{{"send_lag", r.SendLag}, {"uncorrected", r.Uncorrected}} {
		if x.h.Count() == 0 {
			continue
		}
		m.Extra[result.ExtraQuantileUs(x.name, "p50")] = float64(x.h.Quantile(50)) / 1e3
		m.Extra[result.ExtraQuantileUs(x.name, "p99")] = float64(x.h.Quantile(99)) / 1e3
		m.Extra[result.ExtraQuantileUs(x.name, "p99.9")] = float64(x.h.Quantile(99.9)) / 1e3
		m.Extra[result.ExtraQuantileUs(x.name, "max")] = float64(x.h.Max()) / 1e3
	}
	m.Histograms = c.Histograms
	return m, c.Histogram, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Verdict explains a step's figures in one phrase: "saturated: ..." when
// the step did not hold its rate.
func Verdict(m result.Metrics, maxLag time.Duration) string {
	if m.Extra[result.ExtraSaturated] != 1 {
		return ""
	}
	t, a := m.Extra[result.ExtraTargetRPS], m.Extra[result.ExtraAchievedRPS]
	if a < loadgen.SaturatedBelow*t {
		return fmt.Sprintf("saturated: achieved %.0f/s of %.0f/s", a, t)
	}
	v := fmt.Sprintf("saturated: send lag p99 %.0fus over %v", m.Extra[result.ExtraQuantileUs("send_lag", "p99")], maxLag)
	switch b, ok := m.Extra[result.ExtraConnsBusy]; {
	case !ok:
	case b >= 0.1:
		v += fmt.Sprintf("; every connection was busy %.1f%% of the time: the server did not keep up (or raise --connections)", b)
	default:
		v += "; a connection was always free: the client thread was late (CPU busy or descheduled)"
	}
	return v
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// sockperfHeader is the size of sockperf's message header: a 64-bit
// sequence number, 16-bit flags and a 32-bit length, big endian.
const sockperfHeader = 14

// SockperfPing is a request a `sockperf server` answers with the same
// number of bytes: a message flagged as a client ping that wants a pong.
// It lets tcp_rate be held against sockperf's own client on the very same
// server.
func SockperfPing(size int) []byte {
	b := make([]byte, size)
	binary.BigEndian.PutUint64(b[0:], 1)
	binary.BigEndian.PutUint16(b[8:], 3) // client | pong request
	binary.BigEndian.PutUint32(b[10:], uint32(size))
	return b
}
