package hostprobe

import "testing"

func TestParseNetDev(t *testing.T) {
	s := `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    1234      10    0    0    0     0          0         0     1234      10    0    0    0     0       0          0
  eth0: 987654321  100    0    0    0     0          0         0      555       5    0    0    0     0       0          0
`
	for _, tc := range []struct {
		dev  string
		want uint64
		ok   bool
	}{{"lo", 1234, true}, {"eth0", 987654321, true}, {"eth1", 0, false}} {
		got, ok := ParseNetDev(s, tc.dev)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %d %v, want %d %v", tc.dev, got, ok, tc.want, tc.ok)
		}
	}
}
