package etcd

import (
	"context"
	"net"
	"net/http"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/testutil"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/lab"
)

// dialIn dials from inside network namespace ns: the locked thread enters
// ns, Go makes the socket on it, and the thread returns home.
func dialIn(ns string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			return nil, err
		}
		defer home.Close()
		target, err := os.Open("/run/netns/" + ns)
		if err != nil {
			runtime.UnlockOSThread()
			return nil, err
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			return nil, err
		}
		var d net.Dialer
		c, derr := d.DialContext(ctx, network, addr)
		if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
			panic("cannot return to the test's namespace: " + err.Error()) // never unlock a thread in the wrong namespace
		}
		runtime.UnlockOSThread()
		return c, derr
	}
}

// TestFollow is the daemons' view: the JSON-gateway client, from inside a
// host, sees the existing leases, then one added later through the watch.
func TestFollow(t *testing.T) {
	testutil.NeedRoot(t, "it builds network namespaces")
	if err := Check(); err != nil {
		t.Skip(err)
	}
	l, err := lab.New(lab.Config{Hosts: 1, ID: "t" + lab.NewID()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Teardown() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Create(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := Start(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	h := l.Hosts[0]
	const prefix = "/coreos.com/network/subnets/"
	if err := s.Put(ctx, l, h.NetNS, prefix+"10.244.1.0-24", `{"PublicIP":"10.100.0.1"}`); err != nil {
		t.Fatal(err)
	}
	c := &Client{URL: s.URL, HTTP: &http.Client{Transport: &http.Transport{DialContext: dialIn(h.NetNS)}}}
	seen := make(chan int, 16)
	fctx, fcancel := context.WithCancel(ctx)
	defer fcancel()
	go c.Follow(fctx, prefix, func(kvs []KV) { seen <- len(kvs) })
	wait := func(want int) {
		t.Helper()
		for {
			select {
			case n := <-seen:
				if n == want {
					return
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("never saw %d leases", want)
			}
		}
	}
	wait(1)
	if err := s.Put(ctx, l, h.NetNS, prefix+"10.244.2.0-24", `{"PublicIP":"10.100.0.2"}`); err != nil {
		t.Fatal(err)
	}
	wait(2)
	if _, err := l.In(ctx, h.NetNS, "etcdctl", "--endpoints", s.URL, "del", prefix+"10.244.1.0-24"); err != nil {
		t.Fatal(err)
	}
	wait(1)
}
