package svctest

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/svc"
)

// GoldenServices is a small fixed set: a service with three endpoints on
// two nodes, a UDP one with one endpoint, and one without endpoints.
func GoldenServices() []svc.Service {
	ep := func(pod string, host int, ip string) svc.Endpoint {
		return svc.Endpoint{Pod: pod, Host: host, IP: netip.MustParseAddr(ip), Port: 8080}
	}
	return []svc.Service{
		{Name: "web", VIP: netip.MustParseAddr("10.96.0.10"), Port: 80, Proto: "tcp",
			Endpoints: []svc.Endpoint{ep("b1", 2, "10.244.2.2"), ep("b2", 3, "10.244.3.2"), ep("b3", 2, "10.244.2.3")}},
		{Name: "dns", Namespace: "kube-system", VIP: netip.MustParseAddr("10.96.0.11"), Port: 53, Proto: "udp",
			Endpoints: []svc.Endpoint{ep("b1", 2, "10.244.2.2")}},
		{Name: "empty", VIP: netip.MustParseAddr("10.96.0.12"), Port: 80, Proto: "tcp"},
	}
}

// Golden compares got with testdata/name.golden (go test -update rewrites it).
func Golden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name, got)
}

// Recorded runs two Syncs (the services, then without the first one) and a
// Teardown of lb against a recorded 2-node lab and returns the commands,
// with the rule folder shown as $DIR, and the rule files as they were.
func Recorded(t *testing.T, lb svc.LB) string {
	t.Helper()
	rec := &lab.Recorder{}
	l, err := lab.New(lab.Config{ID: "test", Exec: rec, NoStateDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := &svc.Cluster{Lab: l, Dir: dir}
	ctx := context.Background()
	all := GoldenServices()
	var b strings.Builder
	step := func(title string, f func() error) {
		rec.Lines = nil
		if err := f(); err != nil {
			t.Fatalf("%s: %v", title, err)
		}
		b.WriteString("## " + title + "\n")
		// nodes are programmed in parallel: sort for a stable text
		lines := append([]string(nil), rec.Lines...)
		sort.Strings(lines)
		for _, line := range lines {
			b.WriteString(strings.ReplaceAll(line, dir, "$DIR") + "\n")
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			b.WriteString("### " + filepath.Base(f) + "\n" + string(data))
			os.Remove(f)
		}
	}
	step("sync", func() error { return lb.Sync(ctx, c, all) })
	step("sync without "+all[0].Name, func() error { return lb.Sync(ctx, c, all[1:]) })
	step("teardown", func() error { return lb.Teardown(ctx) })
	return b.String()
}
