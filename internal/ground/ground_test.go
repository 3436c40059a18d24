package ground

import (
	"strings"
	"testing"
)

func TestParsePlacement(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"same-pod", "same-pod", ""},
		{"cross-host", "cross-host", ""},
		{"same-node", "same-host", ""}, // Kubernetes' word
		{"cross-node", "cross-host", ""},
		{"cross-hots", "", `did you mean "cross-host"`},
		{"", "", "use one of same-pod, same-host, cross-host"},
	} {
		p, err := ParsePlacement(c.in)
		if string(p) != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("ParsePlacement(%q) = %q, %v; want %q, error with %q", c.in, p, err, c.want, c.err)
		}
	}
}

func TestCPUTimes(t *testing.T) {
	a := CPUTimes{User: 5, System: 3, Idle: 10, SoftIRQ: 1, KSoftirqd: 0.5}
	b := CPUTimes{User: 2, System: 1, Idle: 4}
	d := a.Sub(b)
	if d.User != 3 || d.System != 2 || d.Idle != 6 || d.KSoftirqd != 0.5 {
		t.Errorf("Sub = %+v", d)
	}
	if got := d.Busy(); got != 3+2+1 {
		t.Errorf("Busy = %v, want 6 (idle not counted)", got)
	}
}
