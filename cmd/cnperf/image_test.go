package main

import (
	"strings"
	"testing"
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
