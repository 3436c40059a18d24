package ctrlplane

import (
	"os"
	"testing"
)

func TestParseStatCPU(t *testing.T) {
	cases := []struct {
		name, stat string
		want       float64
		bad        bool
	}{
		{"plain", "123 (cnperf) S 1 123 123 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 100 0 0", 3.0, false},
		{"spaces in name", "7 (a b) c) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 0 0", 0.03, false},
		{"short", "1 (x) S 1 2", 0, true},
		{"no paren", "garbage", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseStatCPU(c.stat)
			if (err != nil) != c.bad {
				t.Fatalf("err %v, want bad=%v", err, c.bad)
			}
			if !c.bad && (got < c.want-1e-9 || got > c.want+1e-9) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestCPUSecondsSelf(t *testing.T) {
	s, err := CPUSeconds(os.Getpid())
	if err != nil || s < 0 {
		t.Fatalf("CPUSeconds(self) = %v, %v", s, err)
	}
}
