package services

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
	Text(&b, run)
	out := strings.Join(strings.Fields(strings.ReplaceAll(b.String(), "\n", " \\ ")), " ")
	for _, want := range []string{
		"services  sync s  short tcp_crr/s  vs iptables  crr p50 us  short http_qps/s  vs iptables",
		// no rounds recorded: the ratio of the geometric means, no test
		"none (pod IP)  -         -       1100             ?1.10x",
		"ebpf-socket  1         0.020   1500             ?1.50x         55.0        300               ?1.50x",
		"ebpf-socket  10000     0.050   900              ?4.50x        70.0",
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
	Text(&b, run)
	if !strings.Contains(b.String(), "vs ipvs") || !strings.Contains(b.String(), "?3.00x") {
		t.Errorf("with ipvs: no vs ipvs column or ebpf-socket's ?3.00x:\n%s", b.String())
	}
	b.Reset()
	Text(&b, &result.Run{Results: []result.Result{{Network: "bridge", Workload: "tcp_rr"}}})
	if b.Len() != 0 {
		t.Errorf("a services table for a run without services:\n%s", b.String())
	}
}

// TestServicesVerdicts: the paired ratio to iptables over rounds carries
// the verdict's mark the main table uses, the interval is about the
// printed ratio, and the legend says what each mark means.
func TestServicesVerdicts(t *testing.T) {
	base := []float64{1000, 1100, 900} // iptables, per round
	tests := []struct {
		name   string
		lb     string
		factor []float64 // the cell's rate over iptables', per round
		rounds int
		want   string // the cell's "vs iptables"
	}{
		{"differs", "ebpf-socket", []float64{1.50, 1.52, 1.48}, 3, "1.50x [1.45, 1.55]"},
		{"equivalent", "nftables", []float64{1.01, 0.99, 1.00}, 3, "=1.00x [0.98, 1.03]"},
		{"undecided, p<0.05 but the interval reaches 0.95", "ebpf-tc", []float64{0.809, 0.820, 0.899}, 3, "?0.84x [0.73, 0.97]"},
		{"one round", "ebpf-tc", []float64{0.5}, 1, "?0.50x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rs []result.Result
			for i := 0; i < tc.rounds; i++ {
				a := svcResult("iptables", 1, "tcp_crr", "", base[i], 60, 0.1)
				b := svcResult(tc.lb, 1, "tcp_crr", "", base[i]*tc.factor[i], 60, 0.1)
				a.Round, b.Round = i+1, i+1
				rs = append(rs, a, b)
			}
			var out bytes.Buffer
			Text(&out, &result.Run{Results: rs})
			var row string
			for _, l := range strings.Split(out.String(), "\n") {
				if f := strings.Fields(l); len(f) > 1 && f[1] == tc.lb {
					row = strings.Join(f, " ")
				}
			}
			if !strings.Contains(row, " "+tc.want+" ") {
				t.Errorf("%s row %q lacks %q:\n%s", tc.lb, row, tc.want, out.String())
			}
			for _, legend := range []string{"geometric mean of the per-round", "not the quotient", "no mark = differs", "= equivalent", "? undecided"} {
				if !strings.Contains(out.String(), legend) {
					t.Errorf("legend lacks %q:\n%s", legend, out.String())
				}
			}
		})
	}
}

// TestServicesPlacements: a run with both placements gets a row per
// placement, each compared with iptables in its own placement.
func TestServicesPlacements(t *testing.T) {
	var rs []result.Result
	for _, c := range []struct {
		place string
		lb    string
		tps   float64
	}{{"same-host", "iptables", 2000}, {"same-host", "ebpf-socket", 3000}, {"cross-host", "iptables", 1000}, {"cross-host", "ebpf-socket", 500}} {
		r := svcResult(c.lb, 1, "tcp_crr", "", c.tps, 60, 0.1)
		r.Placement, r.Round = c.place, 1
		rs = append(rs, r)
	}
	var b bytes.Buffer
	Text(&b, &result.Run{Results: rs})
	out := strings.Join(strings.Fields(strings.ReplaceAll(b.String(), "\n", " \\ ")), " ")
	for _, want := range []string{"host-gw same-host ebpf-socket 1 0.100 3000 ?1.50x", "host-gw cross-host ebpf-socket 1 0.100 500 ?0.50x"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
