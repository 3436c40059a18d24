package all_test

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

func TestValidateExtra(t *testing.T) {
	cases := []struct {
		names []string
		extra map[string]string
		err   string // "" for none
	}{
		{[]string{"tcp_rr"}, map[string]string{"rate": "100"},
			"--rate 100 with tcp_rr: --rate applies to http_rate, tcp_rate; select one of them or drop --rate"},
		{[]string{"tcp_rr", "udp_rr"}, map[string]string{"keepalive": "false"},
			"--keepalive false with tcp_rr, udp_rr: --keepalive applies to http_qps"},
		{[]string{"tcp_rr", "http_rate"}, map[string]string{"rate": "100"}, ""},
		// http_qps takes no rate, but a run of both gives it to http_rate
		{[]string{"http_qps", "http_rate"}, map[string]string{"rate": "10k,50k", "connections": "8"}, ""},
		{[]string{"http_rate"}, map[string]string{"rate": "fast"}, `--rate "fast"`},
		{[]string{"http_rate"}, map[string]string{"max-rate-search": "maybe"}, `--max-rate-search "maybe": want true or false`},
		{[]string{"http_qps"}, map[string]string{"connections": "many"}, `--connections "many": want a whole number`},
		{[]string{"http_qps"}, map[string]string{"connections": "0"}, `--connections "0": use 1 to`},
		{[]string{"http_rate"}, map[string]string{"server": "apache"}, `--server "apache": want one of builtin, nginx`},
		{[]string{"http_rate"}, map[string]string{"response-size": "350,4k"}, `--response-size "350,4k"`},
		{[]string{"tcp_rate"}, map[string]string{"max-send-lag": "soon"}, `--max-send-lag "soon": want a duration`},
		{[]string{"tcp_rr"}, map[string]string{"bogus": "1"}, "--bogus 1: no workload takes --bogus"},
		{[]string{"tcp_nope"}, map[string]string{"rate": "1"}, "unknown workload"},
		{[]string{"tcp_rr"}, nil, ""},
	}
	for _, c := range cases {
		err := workload.ValidateExtra(c.names, c.extra)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v %v: %v", c.names, c.extra, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v %v: error %v, want %q", c.names, c.extra, err, c.err)
		}
	}
}

func TestFlagsAreTheDeclaredOptions(t *testing.T) {
	flags := map[string]workload.Flag{}
	for _, f := range workload.Flags() {
		if _, dup := flags[f.Name]; dup {
			t.Errorf("flag --%s twice", f.Name)
		}
		flags[f.Name] = f
	}
	for _, n := range workload.Names() {
		w, _ := workload.Get(n)
		for _, s := range workload.OptionsOf(w) {
			f, ok := flags[s.Name]
			if !ok {
				t.Errorf("%s declares %s, no flag", n, s.Name)
				continue
			}
			if f.Bool != (s.Kind == option.Bool) {
				t.Errorf("--%s: Bool %v, kind %s", s.Name, f.Bool, s.Kind)
			}
			if !strings.Contains(f.Usage, n) {
				t.Errorf("--%s usage %q does not name %s", s.Name, f.Usage, n)
			}
		}
	}
	for _, want := range []string{"rate", "max-rate-search", "keepalive", "response-size", "connections", "threads"} {
		if _, ok := flags[want]; !ok {
			t.Errorf("no --%s flag", want)
		}
	}
	if u := flags["connections"].Usage; !strings.Contains(u, "16 for http_qps") || !strings.Contains(u, "64 for http_rate/tcp_rate") {
		t.Errorf("--connections usage %q: want both defaults", u)
	}
}

// TestFigures checks every workload's declaration: figures to show, the
// first one its main figure with a ratio to baseline, keys Value reads.
func TestFigures(t *testing.T) {
	full := result.Metrics{
		ThroughputBps: result.F(1), TransactionsPerS: result.F(1), LossRatio: result.F(0), Errors: result.I(0),
		ClientCPUSPerS: result.F(1), ServerCPUSPerS: result.F(1), DurationS: result.F(1),
		LatencyUs: map[string]float64{}, Extra: map[string]float64{},
		CPU: &result.CPUCost{UsPerTrans: result.F(1), NsPerByte: result.F(1), CellUsPerTrans: result.F(1), CellNsPerByte: result.F(1)},
	}
	for _, n := range workload.Names() {
		w, _ := workload.Get(n)
		fs := w.Figures()
		if len(fs) == 0 {
			t.Errorf("%s declares no figure", n)
			continue
		}
		for _, f := range fs {
			if f.Label == "" || f.Key == "" || f.Kind == "" || (f.Better != result.HigherBetter && f.Better != result.LowerBetter) {
				t.Errorf("%s: incomplete figure %+v", n, f)
			}
			group, name, _ := strings.Cut(f.Key, ".")
			switch group {
			case "latency_us", "extra":
				full.LatencyUs[name], full.Extra[name] = 1, 1
			}
			if _, ok := full.Value(f.Key); !ok {
				t.Errorf("%s: figure %s is no metric Value reads", n, f.Key)
			}
		}
	}
}
