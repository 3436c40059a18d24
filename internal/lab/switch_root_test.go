package lab_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
)

// The switch between hosts runs no netfilter, even where br_netfilter is
// loaded (a new namespace's bridges would pass frames through iptables);
// the hosts' own namespaces keep the kernel's default.
func TestSwitchWithoutNetfilter(t *testing.T) {
	labtest.NeedRoot(t)
	if _, err := os.Stat("/proc/sys/net/bridge/bridge-nf-call-iptables"); err != nil {
		t.Skip("br_netfilter is not loaded: bridges run no netfilter anyway")
	}
	id := "sw" + lab.NewID()
	l, err := lab.New(lab.Config{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer labtest.AssertClean(t, id)
	defer l.Teardown()
	if err := l.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	get := func(ns string) string {
		out, err := exec.Command("ip", "netns", "exec", ns, "sysctl", "-n", "net.bridge.bridge-nf-call-iptables").CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", ns, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if v := get(l.Switch); v != "0" {
		t.Errorf("switch %s: bridge-nf-call-iptables = %s, want 0", l.Switch, v)
	}
	if v := get(l.Hosts[0].NetNS); v != "1" {
		t.Errorf("host %s: bridge-nf-call-iptables = %s; a host keeps the default (1)", l.Hosts[0].NetNS, v)
	}
}
