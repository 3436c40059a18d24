package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImageUsage: every wrong use of `cnperf image` is one line naming the
// right one, before anything is built or contacted.
func TestImageUsage(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "name a command: build, push"},
		{[]string{"bogus"}, `unknown image command "bogus"`},
		{[]string{"biuld"}, `did you mean "build"?`},
		{[]string{"push"}, "push where?"},
		{[]string{"push", "a:1", "b:2"}, `unexpected argument "b:2"`},
		{[]string{"push", "Bad Ref"}, "REGISTRY/REPOSITORY:TAG"},
		{[]string{"push", "--nope"}, "unknown flag --nope"},
		{[]string{"build", "--tag", "Bad Ref", "--binary", "/nonexistent"}, "REGISTRY/REPOSITORY:TAG"}, // refused before the binary is read
		{[]string{"build", "--binary", "/nonexistent"}, "no such file"},
		{[]string{"build", "--out", "/nonexistent/dir/x.tar"}, "folder /nonexistent/dir does not exist"},
		{[]string{"build", "extra"}, `unexpected argument "extra"`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			err := call("image", c.args)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("cnperf image %v: %v; want one line with %q", c.args, err, c.want)
			}
		})
	}
}

// Issue 34 finding 2: `cnperf image push` to a registry that accepts the
// connection and never answers waited forever (still at 600 s). It ends
// at its --timeout, naming the registry and the deadline.
func TestImagePushSilentRegistry(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		var held []net.Conn // accepted, never answered
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	bin := filepath.Join(t.TempDir(), "agent")
	staticProgram(t, bin)
	host := l.Addr().String()
	start := time.Now()
	err = call("image", []string{"push", host + "/cnperf-agent:t1", "--binary", bin, "--timeout", "2s"})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "the registry "+host+" did not answer in time") || !strings.Contains(err.Error(), "at most 2s: --timeout") {
		t.Errorf("push: %v", err)
	}
	if took > 30*time.Second {
		t.Errorf("push took %v with --timeout 2s", took)
	}
	t.Logf("ended after %v: %v", took.Round(100*time.Millisecond), err)
}
