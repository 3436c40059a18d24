package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
)

// TestNotRootMessages: a user who is not root is told what the command
// needs root for, and nothing is made before the refusal (issue 23,
// finding 8: --backend docker said it creates namespaces, it creates none;
// recommend made cnperf-results/ before refusing).
func TestNotRootMessages(t *testing.T) {
	labtest.NeedRoot(t) // to switch to another user
	bin := cnperf(t)
	dir, err := os.MkdirTemp("", "cnperf-notroot")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	nb := filepath.Join(dir, "cnperf")
	b, _ := os.ReadFile(bin)
	if err := os.WriteFile(nb, b, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o777) // a folder nobody may write in: what it makes shows
	for _, tc := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"run", "--networks", "vxlan"}, "needs root to create network namespaces", ""},
		{[]string{"run", "--backend", "docker", "--networks", "bridge"}, "control sockets in /run/cnperf-docker", "namespaces"},
		{[]string{"recommend", "--profile", "latency"}, "needs root", ""},
	} {
		t.Run(tc.args[0]+" "+tc.args[1], func(t *testing.T) {
			cmd := exec.Command(nb, tc.args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "DOCKER_HOST=unix:///nonexistent/docker.sock")
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			out, err := cmd.CombinedOutput()
			msg := string(out)
			if err == nil || !strings.Contains(msg, tc.want) || (tc.not != "" && strings.Contains(msg, tc.not)) {
				t.Fatalf("err %v, output %q; want %q, not %q", err, msg, tc.want, tc.not)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Errorf("left %d entries in the working folder (%v)", len(ents)-1, ents)
			}
		})
	}
}
