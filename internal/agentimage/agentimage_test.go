package agentimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// staticBinary is a small static Linux program standing in for cnperf (it
// prints its arguments), built once per test process.
func staticBinary(tb testing.TB) string {
	tb.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "cnperf-agentimage-test")
		if binErr != nil {
			return
		}
		src := "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() { fmt.Println(\"args:\", os.Args[1:]) }\n"
		if binErr = os.WriteFile(filepath.Join(binDir, "main.go"), []byte(src), 0o644); binErr != nil {
			return
		}
		if binErr = os.WriteFile(filepath.Join(binDir, "go.mod"), []byte("module fakeagent\n\ngo 1.22\n"), 0o644); binErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-trimpath", "-o", "fakeagent", ".")
		cmd.Dir = binDir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = &buildErr{err, string(out)}
		}
	})
	if binErr != nil {
		tb.Fatalf("building a static test binary: %v", binErr)
	}
	return filepath.Join(binDir, "fakeagent")
}

type buildErr struct {
	err error
	out string
}

func (e *buildErr) Error() string { return e.err.Error() + ": " + e.out }

// variant is a copy of the binary with one byte more at its end: another
// binary that still parses as the same ELF.
func variant(tb testing.TB, bin string) string {
	b, err := os.ReadFile(bin)
	if err != nil {
		tb.Fatal(err)
	}
	p := filepath.Join(tb.TempDir(), "variant")
	if err := os.WriteFile(p, append(b, 0), 0o755); err != nil {
		tb.Fatal(err)
	}
	return p
}

func archive(tb testing.TB, bin, ref string) ([]byte, *Image) {
	tb.Helper()
	im, err := Build(bin)
	if err != nil {
		tb.Fatal(err)
	}
	tag, err := ParseTag(ref, false)
	if err != nil {
		tb.Fatal(err)
	}
	p := filepath.Join(tb.TempDir(), "agent.tar")
	if err := WriteFile(p, im, tag); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return b, im
}

func TestReproducible(t *testing.T) {
	bin := staticBinary(t)
	a1, im1 := archive(t, bin, "cnperf-agent:t")
	// wait so that anything dated "now" would differ
	time.Sleep(1100 * time.Millisecond)
	a2, im2 := archive(t, bin, "cnperf-agent:t")
	d1, _ := im1.Digest()
	d2, _ := im2.Digest()
	if d1 != d2 {
		t.Errorf("same binary, two digests: %s and %s", d1, d2)
	}
	if !bytes.Equal(a1, a2) {
		t.Errorf("same binary, archives differ (%d and %d bytes)", len(a1), len(a2))
	}
	a3, im3 := archive(t, variant(t, bin), "cnperf-agent:t")
	d3, _ := im3.Digest()
	if d3 == d1 || bytes.Equal(a1, a3) {
		t.Errorf("another binary gave the same image %s", d3)
	}
	if im3.DefaultTag() == im1.DefaultTag() || !strings.HasPrefix(im1.DefaultTag(), Repo+":") {
		t.Errorf("default tags %s and %s", im1.DefaultTag(), im3.DefaultTag())
	}
}

func TestBuildRefuses(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "script")
	os.WriteFile(text, []byte("#!/bin/sh\necho hi\n"), 0o755)
	cases := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope"), "no such file"},
		{"not ELF", text, "not a Linux executable"},
		{"dynamic", "/bin/true", "CGO_ENABLED=0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "dynamic" {
				if out, _ := exec.Command("file", "-L", c.path).Output(); !bytes.Contains(out, []byte("dynamically")) {
					t.Skipf("%s is not dynamically linked here", c.path)
				}
			}
			_, err := Build(c.path)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Build(%s) = %v; want one line with %q", c.path, err, c.want)
			}
		})
	}
}

func TestParseTag(t *testing.T) {
	cases := []struct {
		ref, full, short, err string
	}{
		{"cnperf-agent:abc", "docker.io/library/cnperf-agent:abc", "cnperf-agent:abc", ""},
		{"127.0.0.1:5000/cnperf-agent:T", "127.0.0.1:5000/cnperf-agent:T", "127.0.0.1:5000/cnperf-agent:T", ""},
		{"ghcr.io/me/agent", "ghcr.io/me/agent:latest", "ghcr.io/me/agent:latest", ""},
		{"Bad Ref", "", "", "REGISTRY/REPOSITORY:TAG"},
		{"x@sha256:" + strings.Repeat("0", 64), "", "", "REGISTRY/REPOSITORY:TAG"},
	}
	for _, c := range cases {
		t.Run(c.ref, func(t *testing.T) {
			tag, err := ParseTag(c.ref, false)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("ParseTag(%q) = %v; want an error with %q", c.ref, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fullName(tag) != c.full || shortName(tag) != c.short {
				t.Errorf("ParseTag(%q): %s, %s; want %s, %s", c.ref, fullName(tag), shortName(tag), c.full, c.short)
			}
		})
	}
}

// entries reads a tar archive: name -> header and contents, in order.
func entries(tb testing.TB, r io.Reader) ([]string, map[string]*tar.Header, map[string][]byte) {
	tb.Helper()
	tr := tar.NewReader(r)
	var order []string
	hdr, data := map[string]*tar.Header{}, map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		order = append(order, h.Name)
		hdr[h.Name], data[h.Name] = h, b
	}
	return order, hdr, data
}

func TestArchiveLayout(t *testing.T) {
	bin := staticBinary(t)
	binBytes, _ := os.ReadFile(bin)
	a, im := archive(t, bin, "127.0.0.1:5000/cnperf-agent:T")
	order, hdr, data := entries(t, bytes.NewReader(a))
	for _, n := range order {
		h := hdr[n]
		if !h.ModTime.Equal(epoch) || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: dated %v, owned %d:%d; want the epoch, root", n, h.ModTime, h.Uid, h.Gid)
		}
		if h.Typeflag == tar.TypeReg && strings.HasPrefix(n, "blobs/sha256/") {
			sum := sha256.Sum256(data[n])
			if hex.EncodeToString(sum[:]) != strings.TrimPrefix(n, "blobs/sha256/") {
				t.Errorf("%s does not hold what its name says", n)
			}
		}
	}
	var index struct {
		Manifests []struct {
			Digest      string
			Size        int
			Annotations map[string]string
		}
	}
	if err := json.Unmarshal(data["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json %s: %v", data["index.json"], err)
	}
	m := index.Manifests[0]
	want, _ := im.Digest()
	if m.Digest != want || m.Annotations["io.containerd.image.name"] != "127.0.0.1:5000/cnperf-agent:T" ||
		m.Annotations["org.opencontainers.image.ref.name"] != "T" {
		t.Errorf("index.json names %s %v; want %s", m.Digest, m.Annotations, want)
	}
	if _, ok := data["blobs/sha256/"+strings.TrimPrefix(m.Digest, "sha256:")]; !ok {
		t.Errorf("index.json's manifest %s is not in the archive", m.Digest)
	}
	if string(data["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout %s", data["oci-layout"])
	}
	var dm []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(data["manifest.json"], &dm); err != nil || len(dm) != 1 || len(dm[0].Layers) != 1 {
		t.Fatalf("manifest.json %s: %v", data["manifest.json"], err)
	}
	if dm[0].RepoTags[0] != "127.0.0.1:5000/cnperf-agent:T" {
		t.Errorf("RepoTags %v", dm[0].RepoTags)
	}
	var cfg struct {
		Architecture, OS string
		Created          time.Time
		Config           struct {
			Entrypoint, Cmd []string
			Labels          map[string]string
		}
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(data[dm[0].Config], &cfg); err != nil {
		t.Fatalf("config %s: %v", dm[0].Config, err)
	}
	sum := sha256.Sum256(binBytes)
	if cfg.Architecture != "amd64" && cfg.Architecture != "arm64" || cfg.OS != "linux" || !cfg.Created.Equal(epoch) ||
		strings.Join(cfg.Config.Entrypoint, " ") != "/cnperf" || strings.Join(cfg.Config.Cmd, " ") != "agent" ||
		cfg.Config.Labels[LabelBinary] != hex.EncodeToString(sum[:]) || cfg.Config.Labels[LabelAgent] != "1" {
		t.Errorf("config %s", data[dm[0].Config])
	}
	// the layer: gzip of /cnperf (the binary) and /tmp, and its diff id
	zr, err := gzip.NewReader(bytes.NewReader(data[dm[0].Layers[0]]))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(zr)
	diff := sha256.Sum256(raw)
	if len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(diff[:]) {
		t.Errorf("diff ids %v; the layer's is %x", cfg.RootFS.DiffIDs, diff)
	}
	lorder, lhdr, ldata := entries(t, bytes.NewReader(raw))
	if strings.Join(lorder, " ") != "cnperf tmp/" || !bytes.Equal(ldata["cnperf"], binBytes) ||
		lhdr["cnperf"].Mode != 0o755 || lhdr["tmp/"].Mode != 0o1777 {
		t.Errorf("layer holds %v (cnperf mode %o, same bytes %v)", lorder, lhdr["cnperf"].Mode, bytes.Equal(ldata["cnperf"], binBytes))
	}
}

// TestPush pushes to an in-process registry and reads the image back.
func TestPush(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(nilLogger())))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	im, err := Build(staticBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	tag, err := ParseTag(host+"/cnperf-agent:t1", false)
	if err != nil {
		t.Fatal(err)
	}
	dig, err := Push(context.Background(), im, tag, authn.NewMultiKeychain(), 0)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(tag)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest.String() != dig {
		t.Errorf("the registry holds %s; pushed %s", desc.Digest, dig)
	}
}

func TestPushRefusals(t *testing.T) {
	im, err := Build(staticBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	// a port nothing listens on
	srv := httptest.NewServer(nil)
	host := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	tag, _ := ParseTag(host+"/cnperf-agent:t1", false)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = Push(ctx, im, tag, authn.NewMultiKeychain(), 0)
	if err == nil || !strings.Contains(err.Error(), "reachable") || strings.Contains(err.Error(), "\n") {
		t.Errorf("push to a closed port: %v; want one line saying it is not reachable", err)
	}
}

func nilLogger() *log.Logger { return log.New(io.Discard, "", 0) }

// silentRegistry accepts connections and never answers (issue 34 finding
// 2: a push to one waited forever).
func silentRegistry(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}

// A push to a registry that never answers ends at its deadline, naming
// the registry and the deadline; one interrupted says so.
func TestPushBounded(t *testing.T) {
	im, err := Build(staticBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	host := silentRegistry(t)
	tag, _ := ParseTag(host+"/cnperf-agent:t1", false)
	start := time.Now()
	_, err = Push(context.Background(), im, tag, authn.NewMultiKeychain(), time.Second)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "the registry "+host+" did not answer in time") || !strings.Contains(err.Error(), "at most 1s: --timeout") {
		t.Errorf("push to a silent registry: %v", err)
	}
	if took > 20*time.Second { // the deadline is 1 s; generous for a loaded machine
		t.Errorf("push to a silent registry took %v with a deadline of 1s", took)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err = Push(ctx, im, tag, authn.NewMultiKeychain(), time.Minute)
	if err == nil || !strings.Contains(err.Error(), "interrupted while talking to "+host) {
		t.Errorf("interrupted push: %v", err)
	}
}

type fixedKeychain struct{ auth authn.Authenticator }

func (k fixedKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.auth, nil }

// Issue 34 finding 8: a registry refusing the credentials sent was
// answered "log in first", as if none had been.
func TestPushRefusedCredentials(t *testing.T) {
	im, err := Build(staticBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	tag, _ := ParseTag(host+"/cnperf-agent:t1", false)
	for _, c := range []struct {
		name string
		kc   authn.Keychain
		want string
	}{
		{"none sent", fixedKeychain{authn.Anonymous}, "log in first: docker login " + host},
		{"refused", fixedKeychain{&authn.Basic{Username: "u", Password: "wrong"}}, "refused the credentials `docker login` left for " + host},
	} {
		_, err := Push(context.Background(), im, tag, c.kc, 20*time.Second)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
