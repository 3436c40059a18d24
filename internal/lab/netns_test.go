package lab

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/testutil"

	"golang.org/x/sys/unix"
)

// TestInNetNS: f runs in the namespace named, the thread comes back to its
// own, and a namespace that does not exist is an error naming it.
func TestInNetNS(t *testing.T) {
	testutil.NeedRoot(t, "it makes a network namespace")
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2")
	}
	ns := "cnperf-t-innetns-" + NewID()
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	self, _ := os.Readlink("/proc/thread-self/ns/net")
	for _, name := range []string{ns, "/run/netns/" + ns} {
		var inside string
		if err := InNetNS(name, func() error {
			var err error
			inside, err = os.Readlink("/proc/thread-self/ns/net")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(inside, "net:[") || inside == self {
			t.Errorf("%s: inside %q, own %q: f did not run in the namespace", name, inside, self)
		}
	}
	if now, _ := os.Readlink("/proc/thread-self/ns/net"); now != self {
		t.Errorf("after InNetNS the thread is in %q, want its own %q", now, self)
	}
	fd, err := SocketIn(ns, unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	if err := InNetNS("cnperf-t-no-such-ns", func() error { return nil }); err == nil || !strings.Contains(err.Error(), "cnperf-t-no-such-ns") {
		t.Errorf("missing namespace: %v, want an error naming it", err)
	}
}
