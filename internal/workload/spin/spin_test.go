package spin

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
)

func TestDuty(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"", 1, true}, {"10%", 0.1, true}, {"100", 1, true}, {"0%", 0, false}, {"101%", 0, false}, {"x", 0, false},
	} {
		got, err := Duty(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%q: %v, %v", tc.in, got, err)
		}
	}
}

// TestRunEnds: a periodic load stops at its duration, a busy one when
// cancelled.
func TestRunEnds(t *testing.T) {
	p := workload.Params{Duration: 50 * time.Millisecond, Extra: map[string]string{DutyKey: "20%"}}
	r, err := Spin{}.Run(context.Background(), p, netip.AddrPort{})
	if err != nil || r.Seconds <= 0 {
		t.Fatalf("%+v %v", r, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := Spin{}.Run(ctx, workload.Params{Duration: time.Hour}, netip.AddrPort{})
		done <- err
	}()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
