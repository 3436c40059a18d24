package etcd

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/testutil"

	"github.com/cnperf/cnperf/internal/lab"
)

func TestPrefixEnd(t *testing.T) {
	cases := map[string]string{"/a/": "/a0", "ab": "ac", "a\xff": "b", "\xff": "\x00"}
	for in, want := range cases {
		if got := PrefixEnd(in); got != want {
			t.Errorf("PrefixEnd(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseGet(t *testing.T) {
	out := `{"header":{"revision":7},"kvs":[{"key":"L2I=","value":"Mg=="},{"key":"L2E=","value":"MQ=="}],"count":2}`
	kvs, err := parseGet([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(kvs) != 2 || kvs[0] != (KV{"/a", "1"}) || kvs[1] != (KV{"/b", "2"}) {
		t.Fatalf("got %v", kvs)
	}
	if _, err := parseGet([]byte("{")); err == nil {
		t.Fatal("bad JSON accepted")
	}
}

func TestAddr(t *testing.T) {
	l, err := lab.New(lab.Config{ID: "x", NoStateDirs: true, Exec: &lab.Recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := Addr(l).String(); got != "10.100.0.254" {
		t.Fatalf("Addr = %s", got)
	}
}

func TestMissingEtcd(t *testing.T) {
	old := LookPath
	LookPath = func(string) (string, error) { return "", exec.ErrNotFound }
	t.Cleanup(func() { LookPath = old })
	rec := &lab.Recorder{}
	l, err := lab.New(lab.Config{ID: "x", NoStateDirs: true, Exec: rec})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Start(context.Background(), l)
	if !errors.Is(err, ErrNoEtcd) || !strings.Contains(err.Error(), "apt-get install etcd-server") {
		t.Fatalf("err = %v, want ErrNoEtcd naming the package", err)
	}
	if len(rec.Lines) != 0 {
		t.Fatalf("commands issued before the check: %v", rec.Lines)
	}
}

// TestRealEtcd starts etcd in a one-host lab, registers a key from the host
// over the underlay, reads it back, and checks teardown left no etcd.
func TestRealEtcd(t *testing.T) {
	testutil.NeedRoot(t, "it builds network namespaces")
	if err := Check(); err != nil {
		t.Skip(err)
	}
	l, err := lab.New(lab.Config{Hosts: 1, ID: "t" + lab.NewID()})
	if err != nil {
		t.Fatal(err)
	}
	torn := false
	t.Cleanup(func() {
		if !torn {
			_ = l.Teardown()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	s, err := Start(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd healthy in %v", time.Since(t0))
	h := l.Hosts[0]
	if err := s.Put(ctx, l, h.NetNS, "/coreos.com/network/subnets/10.244.1.0-24", `{"PublicIP":"10.100.0.1"}`); err != nil {
		t.Fatal(err)
	}
	kvs, err := s.GetPrefix(ctx, l, h.NetNS, "/coreos.com/network/subnets/")
	if err != nil {
		t.Fatal(err)
	}
	if len(kvs) != 1 || kvs[0].Value != `{"PublicIP":"10.100.0.1"}` {
		t.Fatalf("read back %v", kvs)
	}
	pid := s.Proc.Cmd.Process.Pid
	torn = true
	if err := l.Teardown(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Fatalf("etcd (pid %d) survived teardown", pid)
	}
	if _, err := os.Stat(l.Dir); err == nil {
		t.Fatalf("etcd data %s survived teardown", l.Dir)
	}
}
