package load

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/httpserver"
	"github.com/cnperf/cnperf/internal/workload"
)

// FuzzRateSizeLists: --rate and --response-size lists (and the options
// beside them) never panic; an error is one line; what is accepted is in
// range: every rate 1 to maxRate requests per second, every size 1 to
// the server's largest response.
func FuzzRateSizeLists(f *testing.F) {
	for _, s := range [][2]string{
		{"20000", "350"}, {"10000,50k,1.5M", "350,4096"}, {"10k", ""}, {"", "1,2,3"},
		{"0", "0"}, {"-5", "-1"}, {"1e9", "99999999999"}, {"NaN", "x"}, {"Inf", " 350 "},
		{"1.5", "350,"}, {",", ","}, {"100M", "4096"}, {"0.5k", "1"}, {"k", ""}, {"1,,2", ""},
	} {
		f.Add(s[0], s[1], false)
		f.Add(s[0], s[1], true)
	}
	f.Fuzz(func(t *testing.T, rate, size string, closed bool) {
		o, err := parseOpts(workload.Params{MessageSize: 350, Extra: map[string]string{"rate": rate, "response-size": size}}, closed)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("rate %q size %q: error %q, want one line", rate, size, msg)
			}
			return
		}
		for _, r := range o.rates {
			if r < 1 || r > maxRate {
				t.Fatalf("rate %q: accepted %d requests/s, out of 1..%d", rate, r, maxRate)
			}
		}
		if rate != "" && len(o.rates) != len(strings.Split(rate, ",")) {
			t.Fatalf("rate %q: %d rates from %d items", rate, len(o.rates), len(strings.Split(rate, ",")))
		}
		if len(o.sizes) == 0 {
			t.Fatalf("size %q: no size", size)
		}
		for _, n := range o.sizes {
			if n < 1 || n > httpserver.MaxResponse {
				t.Fatalf("size %q: accepted %d bytes, out of 1..%d", size, n, httpserver.MaxResponse)
			}
		}
	})
}
