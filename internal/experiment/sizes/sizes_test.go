package sizes

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/ground"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func TestClaimValidateUnits(t *testing.T) {
	cases := []experiment.Case{{Network: "baseline", Placement: ground.CrossHost}, {Network: "vxlan", Placement: ground.CrossHost}}
	one := &experiment.Plan{Cases: cases, Workloads: []string{"tcp_stream"}, Options: map[string]string{"message-size": "1024"}}
	if got := (Sizes{}).Claim(one); got != nil {
		t.Errorf("one size claimed %v; the pairs experiment measures it", got)
	}
	p := &experiment.Plan{Cases: cases, Workloads: []string{"tcp_stream", "udp_rr", "http_rate"}, Options: map[string]string{"message-size": "64,65507"}}
	ws := (Sizes{}).Claim(p)
	if strings.Join(ws, ",") != "tcp_stream,udp_rr" {
		t.Fatalf("claimed %v, want the single-step workloads", ws)
	}
	if err := (Sizes{}).Validate(p, ws); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sizes string
		wl    string
		want  string
	}{
		{"64,0", "tcp_stream", "positive"},
		{"64,65536", "udp_stream", "--message-size 65536: udp_stream"},
		{"64,64", "tcp_stream", "twice"},
	} {
		q := &experiment.Plan{Cases: cases, Workloads: []string{tc.wl}, Options: map[string]string{"message-size": tc.sizes}}
		err := (Sizes{}).Validate(q, []string{tc.wl})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want an error with %q", tc.sizes, tc.wl, err, tc.want)
		}
	}
	units, err := (Sizes{}).Units(p, ws)
	if err != nil || len(units) != 2 {
		t.Fatalf("units %d, %v", len(units), err)
	}
	var names []string
	for _, c := range units[1].Cells {
		names = append(names, c.Name)
	}
	want := "cross-host tcp_stream size=64,cross-host tcp_stream size=65507,cross-host udp_rr size=64,cross-host udp_rr size=65507"
	if strings.Join(names, ",") != want {
		t.Errorf("cells %v, want %s", names, want)
	}
}
