package reference

import (
	"math"
	"strings"
	"testing"
)

// Captured from iperf 2.1.8 and nuttcp 6.1.2 on this machine's lab
// (cnperf lab --network vxlan), then cut or damaged for the error cases.
func TestParseIperf2(t *testing.T) {
	cases := []struct {
		name, out string
		bytes     int64
		secs      float64
		err       string
	}{
		{name: "one stream", out: "19700101000000,10.244.1.2,17358,10.244.2.2,5202,1,0.0-2.0,513802300,2033167629\n",
			bytes: 513802300, secs: 513802300 * 8 / 2033167629.0},
		{name: "intervals then the whole test", out: "19700101000000,10.244.1.2,40000,10.244.2.2,5202,3,0.0-1.0,262144000,2097152000\n" +
			"19700101000000,10.244.1.2,40000,10.244.2.2,5202,3,1.0-2.0,262144000,2097152000\n" +
			"19700101000000,10.244.1.2,40000,10.244.2.2,5202,3,0.0-2.0,524288000,2097152000\n",
			bytes: 524288000, secs: 2},
		{name: "warning lines around", out: "WARNING: delay too large, reducing from 1.0 to 0.5 seconds.\n" +
			"19700101000000,10.244.1.2,17358,10.244.2.2,5202,1,0.0-4.1,1040187392,2010000000\nread failed\n",
			bytes: 1040187392, secs: 1040187392 * 8 / 2010000000.0},
		{name: "human output", out: "[  1] 0.0000-4.1454 sec  1.04 GBytes  2.15 Gbits/sec\n", err: "no CSV report line"},
		{name: "nothing moved", out: "19700101000000,10.244.1.2,17358,10.244.2.2,5202,1,0.0-2.0,0,0\n", err: "no transfer"},
		{name: "empty", out: "", err: "no CSV report line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseIperf2([]byte(c.out))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Bytes != c.bytes || math.Abs(r.Seconds-c.secs) > 1e-9 {
				t.Errorf("got %d bytes in %.6f s, want %d in %.6f", r.Bytes, r.Seconds, c.bytes, c.secs)
			}
		})
	}
}

func TestParseNuttcp(t *testing.T) {
	cases := []struct {
		name, out string
		bytes     int64
		secs      float64
		err       string
	}{
		{name: "transmit", out: "megabytes=547.3750 real_seconds=2.12 rate_Mbps=2166.6582 tx_cpu=9 rx_cpu=12 retrans=0 rtt_ms=0.13\n",
			bytes: 573964288, secs: 547.375 * (1 << 20) * 8 / 2166.6582e6},
		{name: "receive (-r)", out: "megabytes=607.1317 real_seconds=2.11 rate_Mbps=2417.8027 tx_cpu=12 rx_cpu=12 retrans=0\n",
			bytes: 636623729, secs: 607.1317 * (1 << 20) * 8 / 2417.8027e6},
		{name: "warning first", out: "nuttcp-t: Warning: requested window size 0 is smaller\nmegabytes=10.0000 real_seconds=1.00 rate_Mbps=83.8861\n",
			bytes: 10 << 20, secs: 10 * (1 << 20) * 8 / 83.8861e6},
		{name: "human output", out: "  546.9852 MB /   2.00 sec = 2289.0158 Mbps 4 %TX 26 %RX 0 retrans 0.14 msRTT\n", err: "no megabytes="},
		{name: "nothing moved", out: "megabytes=0.0000 real_seconds=2.00 rate_Mbps=0.0000\n", err: "no transfer"},
		{name: "error", out: "nuttcp-t: v6.1.2: Error: connect: Connection refused\n", err: "no megabytes="},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseNuttcp([]byte(c.out))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Bytes != c.bytes || math.Abs(r.Seconds-c.secs) > 1e-9 {
				t.Errorf("got %d bytes in %.6f s, want %d in %.6f", r.Bytes, r.Seconds, c.bytes, c.secs)
			}
		})
	}
}
