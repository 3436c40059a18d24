package parallel

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/ground"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func TestClaimValidateUnits(t *testing.T) {
	cases := []experiment.Case{{Network: "host-gw", Placement: ground.CrossHost}}
	if got := (Parallel{}).Claim(&experiment.Plan{Cases: cases, Workloads: []string{"tcp_rr"}, Options: map[string]string{"parallel": "1"}}); got != nil {
		t.Errorf("one flow claimed %v; the pairs experiment measures it", got)
	}
	p := &experiment.Plan{Cases: cases, Workloads: []string{"tcp_rr", "udp_stream", "http_rate"}, Options: map[string]string{"parallel": "4"}}
	ws := (Parallel{}).Claim(p)
	if strings.Join(ws, ",") != "tcp_rr,udp_stream" {
		t.Fatalf("claimed %v", ws)
	}
	if err := (Parallel{}).Validate(p, ws); err != nil {
		t.Fatal(err)
	}
	big := *p
	big.Options = map[string]string{"parallel": strconv.Itoa(Max + 1)}
	if err := (Parallel{}).Validate(&big, ws); err == nil || !strings.Contains(err.Error(), "--parallel") {
		t.Errorf("--parallel %d: %v", Max+1, err)
	}
	units, err := (Parallel{}).Units(p, ws)
	if err != nil || len(units) != 1 || len(units[0].Cells) != 2 {
		t.Fatalf("units %+v, %v", units, err)
	}
	if n := units[0].Cells[1].Name; n != "cross-host udp_stream flows=4" {
		t.Errorf("cell %q", n)
	}
}
