package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

func svcResult(lb string, n int, wl, ka string, tps, p50, sync float64) result.Result {
	p := map[string]any{}
	if ka != "" {
		p["keepalive"] = ka
	}
	m := result.Metrics{TransactionsPerS: result.F(tps), LatencyUs: map[string]float64{"p50": p50}}
	if sync > 0 {
		m.Extra = map[string]float64{"sync_s": sync}
	}
	return result.Result{Network: "host-gw", Placement: "cross-host", LB: lb, Services: n, Workload: wl, Params: p, Metrics: m}
}

func TestServicesTable(t *testing.T) {
	run := &result.Run{Results: []result.Result{
		svcResult("none", 0, "tcp_crr", "", 1100, 50, 0),
		svcResult("iptables", 1, "tcp_crr", "", 1000, 60, 0.1),
		svcResult("iptables", 1, "tcp_crr", "", 1000, 60, 0.1),
		svcResult("iptables", 10000, "tcp_crr", "", 200, 600, 5),
		svcResult("ebpf-socket", 10000, "tcp_crr", "", 900, 70, 0.05),
		svcResult("ebpf-socket", 1, "tcp_crr", "", 1500, 55, 0.02),
		svcResult("ebpf-socket", 1, "http_qps", "false", 300, 0, 0.02),
		svcResult("iptables", 1, "http_qps", "false", 200, 0, 0.1),
	}}
	var b bytes.Buffer
	Services(&b, run)
	out := strings.Join(strings.Fields(strings.ReplaceAll(b.String(), "\n", " \\ ")), " ")
	for _, want := range []string{
		"services  sync s  short tcp_crr/s  vs iptables  crr p50 us  short http_qps/s  vs iptables",
		"none (pod IP)  -         -       1100             +10%",
		"ebpf-socket  1         0.020   1500             +50%         55.0        300               +50%",
		"ebpf-socket  10000     0.050   900              +350%        70.0",
		"iptables     10000     5.000   200              -            600.0",
	} {
		if want = strings.Join(strings.Fields(want), " "); !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "vs ipvs") {
		t.Error("a vs ipvs column without ipvs results")
	}
	// rows: reference, then iptables 1 before 10000, then ebpf-socket 1 before 10000
	if i, j := strings.Index(out, "ebpf-socket 1 "), strings.Index(out, "ebpf-socket 10000"); i < 0 || j < i {
		t.Errorf("rows out of order:\n%s", out)
	}
	run.Results = append(run.Results, svcResult("ipvs", 1, "tcp_crr", "", 500, 80, 0.3))
	b.Reset()
	Services(&b, run)
	if !strings.Contains(b.String(), "vs ipvs") || !strings.Contains(b.String(), "+200%") {
		t.Errorf("with ipvs: no vs ipvs column or ebpf-socket's +200%%:\n%s", b.String())
	}
	b.Reset()
	Services(&b, &result.Run{Results: []result.Result{{Network: "bridge", Workload: "tcp_rr"}}})
	if b.Len() != 0 {
		t.Errorf("a services table for a run without services:\n%s", b.String())
	}
}
