package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/pmqos"
	"github.com/cnperf/cnperf/internal/workload"
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

// TestLoadPlainWorkloads runs `cnperf load tcp_rr|tcp_stream` against the
// workload's own server half (what `cnperf load serve NAME` runs) and checks
// that the figures bench-load.sh reads are printed and plausible.
func TestLoadPlainWorkloads(t *testing.T) {
	cases := []struct {
		name, size string
		want       []string
	}{
		{"tcp_rr", "16", []string{"transactions/s:", "latency (us): p50", "p99", "us per transaction"}},
		{"tcp_stream", "65536", []string{"Gbit/s:", "writes of 65536 B", "ns per byte"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := l.Addr().(*net.TCPAddr).Port
			l.Close()
			w, err := workload.Get(c.name)
			if err != nil {
				t.Fatal(err)
			}
			size, _ := strconv.Atoi(c.size)
			p := workload.Params{Port: port, MessageSize: size, Duration: time.Second}
			ctx, cancel := context.WithCancel(context.Background())
			ready := make(chan struct{})
			served := make(chan error, 1)
			go func() {
				_, err := w.Serve(ctx, p, func() { close(ready) })
				served <- err
			}()
			select {
			case <-ready:
			case err := <-served:
				t.Fatalf("server: %v", err)
			}
			out, err := stdout(t, func() error {
				return call("load", []string{c.name, fmt.Sprintf("127.0.0.1:%d", port), "--duration", "300ms",
					"--message-size", c.size, "--cpu-latency", "off"})
			})
			cancel()
			<-served
			if err != nil {
				t.Fatalf("cnperf load %s: %v\n%s", c.name, err, out)
			}
			for _, s := range c.want {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
		})
	}
	if err := call("load", []string{"udp_rr", "127.0.0.1:9"}); err == nil || !strings.Contains(err.Error(), "tcp_rr, tcp_stream") {
		t.Errorf("udp_rr: err = %v, want the list of workloads", err)
	}
}
