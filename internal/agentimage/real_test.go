package agentimage

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/testutil"
)

// testUser's password is "s3cret-test" (htpasswd -Bbn cnperf s3cret-test).
const (
	testUser = "cnperf"
	testPass = "s3cret-test"
	testHash = "cnperf:$2y$05$psgGtojSqYGzySKiQUCwW.Emn5C8VLdcdSs3hcIqsngn7IBjqfrCS"
)

func freePort(tb testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// realRegistry starts Debian's docker-registry (distribution 2.8) on a
// free loopback port, with htpasswd authentication, its own config and
// storage in a temporary folder; it is stopped and removed after the test.
func realRegistry(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		tb.Skip("needs Debian's docker-registry (apt-get install docker-registry)")
	}
	dir := tb.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(tb))
	cfg := fmt.Sprintf(`version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: %s/data}, delete: {enabled: true}}
http: {addr: "%s"}
auth: {htpasswd: {realm: cnperf-test, path: %s/htpasswd}}
`, dir, addr, dir)
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "htpasswd"), []byte(testHash+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", filepath.Join(dir, "config.yml"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
	})
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				return addr
			}
		}
		if i == 100 {
			b, _ := os.ReadFile(filepath.Join(dir, "registry.log"))
			tb.Fatalf("docker-registry on %s did not answer: %v %s", addr, err, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// dockerConfig points $HOME and $DOCKER_CONFIG at a temporary folder whose
// config.json holds auths (registry -> user:password), as `docker login`
// leaves them.
func dockerConfig(t *testing.T, auths map[string]string) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("DOCKER_CONFIG", filepath.Join(home, ".docker"))
	os.MkdirAll(filepath.Join(home, ".docker"), 0o700)
	var parts []string
	for reg, up := range auths {
		parts = append(parts, fmt.Sprintf("%q: {%q: %q}", reg, "auth", base64.StdEncoding.EncodeToString([]byte(up))))
	}
	js := `{"auths": {` + strings.Join(parts, ", ") + `}}`
	if err := os.WriteFile(filepath.Join(home, ".docker", "config.json"), []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRealRegistry pushes to Debian's docker-registry with the
// credentials of a Docker config.json, and is refused without them.
func TestRealRegistry(t *testing.T) {
	addr := realRegistry(t)
	im, err := Build(staticBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := im.Digest()
	tag, err := ParseTag(addr+"/cnperf-agent:"+lab.NewID(), false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cases := []struct {
		name   string
		auths  map[string]string
		refuse string // "" = pushed
	}{
		{"no credentials", nil, "docker login " + addr},
		{"wrong password", map[string]string{addr: testUser + ":wrong"}, "docker login " + addr},
		{"docker login's", map[string]string{addr: testUser + ":" + testPass}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dockerConfig(t, c.auths)
			dig, err := Push(ctx, im, tag, nil, 0)
			if c.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), c.refuse) || strings.Contains(err.Error(), "\n") {
					t.Errorf("push: %v; want one line with %q", err, c.refuse)
				}
				t.Logf("refused: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if dig != want {
				t.Errorf("pushed %s; built %s", dig, want)
			}
			desc, err := remote.Get(tag, remote.WithAuth(&authn.Basic{Username: testUser, Password: testPass}))
			if err != nil {
				t.Fatal(err)
			}
			if desc.Digest.String() != want {
				t.Errorf("the registry holds %s; pushed %s", desc.Digest, want)
			}
			// pushing again is harmless (every blob is there already)
			if _, err := Push(ctx, im, tag, nil, 0); err != nil {
				t.Errorf("second push: %v", err)
			}
		})
	}
}

// TestDockerLoad loads the archive into this machine's Docker engine and
// runs it: the image's id is its config's digest, its entrypoint the binary.
func TestDockerLoad(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("needs the docker CLI and an engine")
	}
	if err := exec.Command("docker", "version").Run(); err != nil {
		t.Skip("needs a Docker engine that answers (docker version failed)")
	}
	ref := "cnperf-agent-test:" + lab.NewID()
	a, im := archive(t, staticBinary(t), ref)
	p := filepath.Join(t.TempDir(), "agent.tar")
	os.WriteFile(p, a, 0o644)
	out, err := exec.Command("docker", "load", "-i", p).CombinedOutput()
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", ref).Run() })
	if err != nil {
		t.Fatalf("docker load: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "Loaded image: "+ref) {
		t.Errorf("docker load said %q; want it to load %s", out, ref)
	}
	id, err := exec.Command("docker", "image", "inspect", "-f", "{{.Id}} {{.Architecture}} {{index .Config.Labels \"cnperf.agent\"}}", ref).Output()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := im.ConfigName()
	if got, want := strings.TrimSpace(string(id)), cfg.String()+" "+im.Arch+" 1"; got != want {
		t.Errorf("docker image inspect: %s; want %s", got, want)
	}
	run, err := exec.Command("docker", "run", "--rm", "--network", "none", "--label", "cnperf.run=agentimage-test", ref).CombinedOutput()
	if err != nil || strings.TrimSpace(string(run)) != "args: [agent]" {
		t.Errorf("docker run %s: %v: %q; want the binary run with its default argument agent", ref, err, run)
	}
}

// TestContainerdImport imports the archive with `ctr images import` into
// a containerd of the test's own (its root, state and socket in a
// temporary folder), unpacked as a node's runtime would.
func TestContainerdImport(t *testing.T) {
	testutil.NeedRoot(t, "runs a containerd of its own")
	for _, b := range []string{"containerd", "ctr"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("needs %s (apt-get install containerd)", b)
		}
	}
	dir, err := os.MkdirTemp("", "cnperf-agentimage-ctrd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// the snapshotter's mounts are gone with the daemon; remove what remains
		exec.Command("umount", "-R", dir).Run()
		os.RemoveAll(dir)
	})
	sock := dir + "/containerd.sock"
	cfg := fmt.Sprintf(`version = 2
root = "%[1]s/root"
state = "%[1]s/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
[grpc]
  address = "%[1]s/containerd.sock"
[ttrpc]
  address = "%[1]s/containerd.sock.ttrpc"
`, dir)
	os.WriteFile(dir+"/config.toml", []byte(cfg), 0o600)
	log, _ := os.Create(dir + "/containerd.log")
	cmd := exec.Command("containerd", "--config", dir+"/config.toml")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
	})
	for i := 0; ; i++ {
		if exec.Command("ctr", "-a", sock, "version").Run() == nil {
			break
		}
		if i == 100 {
			b, _ := os.ReadFile(dir + "/containerd.log")
			t.Fatalf("containerd did not answer: %s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	const ref = "127.0.0.1:5000/cnperf-agent:T"
	a, im := archive(t, staticBinary(t), ref)
	p := filepath.Join(dir, "agent.tar")
	os.WriteFile(p, a, 0o644)
	if out, err := exec.Command("ctr", "-a", sock, "-n", "cnperf-test", "images", "import", p).CombinedOutput(); err != nil {
		t.Fatalf("ctr images import: %v: %s", err, out)
	}
	out, err := exec.Command("ctr", "-a", sock, "-n", "cnperf-test", "images", "ls").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := im.Digest()
	found := false
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[0] == ref && f[2] == want {
			found = true
		}
	}
	t.Logf("ctr images ls:\n%s", out)
	if !found {
		t.Errorf("ctr images ls has no %s at %s:\n%s", ref, want, out)
	}
	// unpacked into the snapshotter: the runtime can run it
	if out, err := exec.Command("ctr", "-a", sock, "-n", "cnperf-test", "images", "check").CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "complete") {
		t.Errorf("ctr images check: %v: %s", err, out)
	}
}
