package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/pmqos"
)

func TestHoldCPULatency(t *testing.T) {
	_, devErr := os.Stat(pmqos.Path)
	canHold := os.Geteuid() == 0 && devErr == nil
	cases := []struct {
		spec    string
		want    int // bound held; -1 none
		err     string
		needDev bool
	}{
		{"off", -1, "", false},
		{"abc", -1, "want microseconds, off or auto", false},
		{"-5", -1, "want microseconds, off or auto", false},
		{"3000000", -1, "out of range", false},
		{"auto", 0, "", true},
		{"7", 7, "", true},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			if c.needDev && !canHold {
				t.Skipf("holding %s needs root and the device", pmqos.Path)
			}
			var log bytes.Buffer
			release, held, err := pmqos.HoldSpec(c.spec, &log)
			if release == nil {
				t.Fatal("release func is nil")
			}
			defer release()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := -1
			if held != nil {
				got = *held
			}
			if got != c.want {
				t.Fatalf("held = %d, want %d", got, c.want)
			}
			if held != nil {
				if cur := pmqos.Current(); cur > *held {
					t.Fatalf("bound in force %d µs, want <= %d while held", cur, *held)
				}
			}
		})
	}
}
