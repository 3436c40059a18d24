package labtest

import "testing"

func TestMentions(t *testing.T) {
	for _, c := range []struct {
		cmdline string
		want    bool
	}{
		{"cnperf\x00agent\x00--listen\x00unix:/run/cnperf/abc/c1.sock", true},
		{"nginx\x00-p\x00/run/cnperf/abc", true},
		{"x\x00--dir=/run/cnperf/abc", true},
		{"cnperf\x00agent\x00--listen\x00unix:/run/cnperf/abcd/c1.sock", false}, // another lab
		{"cnperf\x00agent\x00unix:/run/cnperf/abcd/x\x00/run/cnperf/abc/y", true},
		{"sleep\x001", false},
	} {
		if got := mentions(c.cmdline, "/run/cnperf/abc"); got != c.want {
			t.Errorf("mentions(%q) = %v, want %v", c.cmdline, got, c.want)
		}
	}
}
