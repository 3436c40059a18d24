package blocking

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/nginx"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

func TestPercentile(t *testing.T) {
	xs := []float64{0, 0, 0, 1000, 0, 0, 0, 0, 0, 2000}
	for _, c := range []struct{ q, want float64 }{{50, 0}, {80, 0}, {90, 1000}, {99, 2000}, {100, 2000}, {0, 0}} {
		if got := percentile(xs, c.q); got != c.want {
			t.Errorf("percentile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if xs[3] != 1000 {
		t.Error("percentile sorted its input")
	}
}

// A network whose requests take longer than the baseline's by a known
// amount shows that difference, with an interval that holds it.
func TestMetricsDifference(t *testing.T) {
	// times in whole ms, as nginx logs them: a true 300 µs logs as 1 ms
	// in 30 % of requests, a true 100 µs in 10 %
	mk := func(every int, n int) *sample {
		s := &sample{}
		for i := 0; i < n; i++ {
			v := 0.0
			if i%every == 0 {
				v = 1000
			}
			s.header = append(s.header, v)
			s.connect = append(s.connect, 0)
			s.request = append(s.request, v)
		}
		return s
	}
	base, slow := mk(10, 10000), mk(10, 10000)
	for i := range slow.header {
		if i%10 == 1 || i%10 == 2 {
			slow.header[i] = 1000
		}
	}
	m := metrics(slow, base, false, 20000, 10*time.Second)
	if d := m.Extra[result.ExtraBlockingDiff]; math.Abs(d-200) > 1 {
		t.Errorf("difference %v µs, want 200", d)
	}
	ci := m.Extra[result.ExtraBlockingDiffCI]
	if ci <= 0 || ci > 50 {
		t.Errorf("95%% half-width %v µs, want a few µs with 10,000 requests each", ci)
	}
	if m.LatencyUs["p50"] != 0 || m.LatencyUs["p90"] != 1000 || m.LatencyUs["max"] != 1000 {
		t.Errorf("percentiles %v", m.LatencyUs)
	}
	if *m.TransactionsPerS != 1000 || m.Extra[result.ExtraShare] != 0.5 {
		t.Errorf("rate %v share %v, want 1000/s and 0.5", *m.TransactionsPerS, m.Extra[result.ExtraShare])
	}
	if b := metrics(base, base, true, 20000, 10*time.Second); b.Extra[result.ExtraBlockingDiff] != 0 || len(b.Extra) == 0 {
		if _, ok := b.Extra[result.ExtraBlockingDiff]; ok {
			t.Error("the baseline has a difference to itself")
		}
	}
}

// A backend the balancer's log never names is an error, not a zero.
func TestResultsMissingBackend(t *testing.T) {
	st := &state{load: load{rate: 100, duration: time.Second}}
	a := &row{network: "baseline", placement: ground.CrossHost, upstream: "10.253.1.2:8001"}
	b := &row{network: "vxlan", placement: ground.CrossHost, upstream: "10.253.2.2:8001"}
	c := &row{network: "host-gw", placement: ground.CrossHost, upstream: "10.253.3.2:8001", unreached: "the balancer cannot reach s2"}
	st.nets = []*netState{{network: "baseline", rows: []*row{a}}, {network: "vxlan", rows: []*row{b}}, {network: "host-gw", rows: []*row{c}}}
	for _, ns := range st.nets {
		ns.d = nil
	}
	lines := []nginx.ProxyLine{
		{Upstream: a.upstream, UpstreamStatus: 200, Status: 200, HeaderUs: 1000},
		{Upstream: b.upstream, UpstreamStatus: 502, Status: 502, ConnectUs: -1, HeaderUs: -1},
	}
	rs := st.resultsWith(lines, 0, result.Metrics{}, nil, time.Second, 1, func(*netState) map[string]any { return nil })
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3", len(rs))
	}
	if rs[0].Error != "" || *rs[0].Metrics.Transactions != 1 {
		t.Errorf("baseline: %+v", rs[0])
	}
	if !strings.Contains(rs[1].Error, "no answered request") || !strings.Contains(rs[1].Error, "1 failed") {
		t.Errorf("vxlan error %q, want no answered request and 1 failed", rs[1].Error)
	}
	if rs[2].Error != c.unreached {
		t.Errorf("host-gw error %q, want %q", rs[2].Error, c.unreached)
	}
}

func TestPrime(t *testing.T) {
	for _, c := range []struct{ n, want int }{{1000, 997}, {500, 499}, {200, 199}, {100, 97}, {2, 2}, {3, 3}, {4, 3}, {50000, 49999}} {
		if got := Prime(c.n); got != c.want {
			t.Errorf("Prime(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	p := &experiment.Plan{Params: workload.Params{Extra: map[string]string{"rate": "10k"}}}
	if err := (Blocking{}).Validate(p, nil); err == nil || !strings.Contains(err.Error(), "--rate") {
		t.Errorf("rate 10k: %v, want an error naming --rate", err)
	}
	p.Params.Extra = map[string]string{"connections": "0"}
	if err := (Blocking{}).Validate(p, nil); err == nil || !strings.Contains(err.Error(), "--connections") {
		t.Errorf("connections 0: %v", err)
	}
}
