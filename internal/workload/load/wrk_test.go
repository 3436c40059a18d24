package load

import (
	"math"
	"testing"

	"github.com/cnperf/cnperf/internal/workload"
)

// wrk 4.1's text, as `wrk -t1 -c50 -d2s --latency URL` prints it.
const wrkOut = `Running 2s test @ http://10.244.2.2:8080/
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.31ms  412.11us   9.87ms   88.20%
    Req/Sec    21.70k     1.02k   23.01k    75.00%
  Latency Distribution
     50%    2.25ms
     75%    2.41ms
     90%    2.70ms
     99%    3.65ms
  43190 requests in 2.00s, 14.70MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
Requests/sec:  21584.66
Transfer/sec:      7.35MB
`

func TestParseWrk(t *testing.T) {
	r, err := ParseWrk([]byte(wrkOut))
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6*math.Max(1, math.Abs(b)) }
	if r.Transactions != 43190 || !near(r.Seconds, 2) || r.Errors != 3 || !near(r.Extra["p50_us"], 2250) || !near(r.Extra["p99_us"], 3650) {
		t.Errorf("ParseWrk = %+v; want 43190 requests in 2 s, 3 errors, p50 2250 us, p99 3650 us", r)
	}
	m, _, err := Wrk{}.Metrics(workload.Params{}, r, workload.Report{})
	if err != nil || !near(*m.TransactionsPerS, 21595) || m.LatencyUs["p99"] != r.Extra["p99_us"] {
		t.Errorf("Metrics = %+v, %v", m, err)
	}
	if _, err := ParseWrk([]byte("unable to connect to 10.0.0.1:80 Connection refused\n")); err == nil {
		t.Error("ParseWrk of an error text: no error")
	}
}
