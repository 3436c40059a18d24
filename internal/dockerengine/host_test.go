package dockerengine

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets this test binary stand in for `docker system dial-stdio`
// on the far side of a fake ssh (TestSSHHost).
func TestMain(m *testing.M) {
	if sock := os.Getenv("CNPERF_TEST_DIAL_STDIO"); sock != "" {
		os.Exit(dialStdio(sock))
	}
	os.Exit(m.Run())
}

// dialStdio joins standard input and output to the engine's socket, as
// `docker system dial-stdio` does.
func dialStdio(sock string) int {
	c, err := net.Dial("unix", sock)
	if err != nil {
		os.Stderr.WriteString("dial-stdio: " + err.Error() + "\n")
		return 1
	}
	go func() {
		_, _ = io.Copy(c, os.Stdin)
		_ = c.(*net.UnixConn).CloseWrite()
	}()
	_, _ = io.Copy(os.Stdout, c)
	return 0
}

// writeContext makes a Docker context in a config folder, as `docker
// context create` lays it out, with TLS files when tlsFiles is not nil.
func writeContext(t *testing.T, dir, name, meta string, tlsFiles map[string]string) {
	t.Helper()
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:])
	md := filepath.Join(dir, "contexts", "meta", id)
	if err := os.MkdirAll(md, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(md, "meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	for f, b := range tlsFiles {
		td := filepath.Join(dir, "contexts", "tls", id, "docker")
		if err := os.MkdirAll(td, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(td, f), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	cfg := t.TempDir() // a config folder with contexts; currentContext remote
	writeFile(t, filepath.Join(cfg, "config.json"), `{"auths":{},"currentContext":"remote"}`)
	writeContext(t, cfg, "remote", `{"Name":"remote","Metadata":{},"Endpoints":{"docker":{"Host":"ssh://me@box","SkipTLSVerify":false}}}`, nil)
	writeContext(t, cfg, "tlsctx", `{"Name":"tlsctx","Metadata":{},"Endpoints":{"docker":{"Host":"tcp://box:2376","SkipTLSVerify":false}}}`,
		map[string]string{"ca.pem": "CA", "cert.pem": "CERT", "key.pem": "KEY"})
	writeContext(t, cfg, "skip", `{"Name":"skip","Endpoints":{"docker":{"Host":"tcp://box:2376","SkipTLSVerify":true}}}`, nil)
	writeContext(t, cfg, "plain", `{"Name":"plain","Endpoints":{"docker":{"Host":"tcp://box:2375"}}}`, nil)
	writeContext(t, cfg, "rootless", `{"Name":"rootless","Endpoints":{"docker":{"Host":"unix:///run/user/1000/docker.sock"}}}`, nil)
	writeContext(t, cfg, "broken", `{"Name":`, nil)
	writeContext(t, cfg, "nodocker", `{"Name":"nodocker","Endpoints":{"kubernetes":{}}}`, nil)
	empty := t.TempDir() // no config.json at all
	home := t.TempDir()  // ~/.docker found through HOME
	writeFile(t, filepath.Join(home, ".docker", "config.json"), `{"currentContext":"rootless"}`)
	writeContext(t, filepath.Join(home, ".docker"), "rootless", `{"Name":"rootless","Endpoints":{"docker":{"Host":"unix:///run/user/1000/docker.sock"}}}`, nil)
	certs := t.TempDir()
	writeFile(t, filepath.Join(certs, "ca.pem"), "CA")
	writeFile(t, filepath.Join(certs, "cert.pem"), "CERT")
	writeFile(t, filepath.Join(certs, "key.pem"), "KEY")
	noKey := t.TempDir()
	writeFile(t, filepath.Join(noKey, "ca.pem"), "CA")

	for _, tc := range []struct {
		name    string
		host    string // given to New (a flag)
		env     map[string]string
		want    string // the host
		context string
		tls     string // "", "verify", "skip"
		client  bool   // a client certificate is loaded
		errHas  string
	}{
		{name: "nothing set", env: map[string]string{"DOCKER_CONFIG": empty}, want: DefaultHost},
		{name: "current context", env: map[string]string{"DOCKER_CONFIG": cfg}, want: "ssh://me@box", context: "remote"},
		{name: "current context through HOME", env: map[string]string{"HOME": home}, want: "unix:///run/user/1000/docker.sock", context: "rootless"},
		{name: "DOCKER_CONTEXT over current", env: map[string]string{"DOCKER_CONFIG": cfg, "DOCKER_CONTEXT": "plain"}, want: "tcp://box:2375", context: "plain"},
		{name: "DOCKER_HOST over contexts", env: map[string]string{"DOCKER_CONFIG": cfg, "DOCKER_CONTEXT": "remote", "DOCKER_HOST": "tcp://h:1"}, want: "tcp://h:1"},
		{name: "a host given over everything", host: "unix:///x.sock", env: map[string]string{"DOCKER_CONFIG": cfg, "DOCKER_HOST": "tcp://h:1"}, want: "unix:///x.sock"},
		{name: "context default", env: map[string]string{"DOCKER_CONFIG": cfg, "DOCKER_CONTEXT": "default"}, want: DefaultHost},
		{name: "context with TLS files", env: map[string]string{"DOCKER_CONFIG": cfg, "DOCKER_CONTEXT": "tlsctx"}, want: "tcp://box:2376", context: "tlsctx", tls: "verify", client: true},
		{name: "context skipping verification", env: map[string]string{"DOCKER_CONFIG": cfg, "DOCKER_CONTEXT": "skip"}, want: "tcp://box:2376", context: "skip", tls: "skip"},
		{name: "context missing", env: map[string]string{"DOCKER_CONFIG": cfg, "DOCKER_CONTEXT": "gone"}, errHas: `docker context "gone" (DOCKER_CONTEXT) not found`},
		{name: "context broken", env: map[string]string{"DOCKER_CONFIG": cfg, "DOCKER_CONTEXT": "broken"}, errHas: "meta.json"},
		{name: "context without docker endpoint", env: map[string]string{"DOCKER_CONFIG": cfg, "DOCKER_CONTEXT": "nodocker"}, errHas: "no docker endpoint"},
		{name: "tcp without port", env: map[string]string{"DOCKER_CONFIG": empty, "DOCKER_HOST": "tcp://box"}, want: "tcp://box:2375"},
		{name: "bare host:port", env: map[string]string{"DOCKER_CONFIG": empty, "DOCKER_HOST": "box:2375"}, want: "tcp://box:2375"},
		{name: "TLS verify, no host", env: map[string]string{"DOCKER_CONFIG": empty, "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": certs}, want: "tcp://localhost:2376", tls: "verify", client: true},
		{name: "TLS verify without client cert", env: map[string]string{"DOCKER_CONFIG": empty, "DOCKER_HOST": "tcp://box:2376", "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": noKey}, want: "tcp://box:2376", tls: "verify"},
		{name: "TLS verify without ca.pem", env: map[string]string{"DOCKER_CONFIG": empty, "DOCKER_HOST": "tcp://box:2376", "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": empty}, errHas: "ca.pem"},
		{name: "DOCKER_TLS does not verify", env: map[string]string{"DOCKER_CONFIG": empty, "DOCKER_HOST": "tcp://box:2376", "DOCKER_TLS": "1", "DOCKER_CERT_PATH": certs}, want: "tcp://box:2376", tls: "skip", client: true},
		{name: "cert path defaults to the config folder", env: map[string]string{"DOCKER_CONFIG": certs, "DOCKER_HOST": "tcp://box:2376", "DOCKER_TLS_VERIFY": "1"}, want: "tcp://box:2376", tls: "verify", client: true},
		{name: "TLS on a socket is ignored", env: map[string]string{"DOCKER_CONFIG": empty, "DOCKER_HOST": "unix:///x.sock", "DOCKER_TLS_VERIFY": "1"}, want: "unix:///x.sock"},
		{name: "ssh with port and path", env: map[string]string{"DOCKER_CONFIG": empty, "DOCKER_HOST": "ssh://me@box:2222/run/docker.sock"}, want: "ssh://me@box:2222/run/docker.sock"},
		{name: "ssh with a password", env: map[string]string{"DOCKER_CONFIG": empty, "DOCKER_HOST": "ssh://me:pw@box"}, errHas: "password"},
		{name: "unknown scheme", env: map[string]string{"DOCKER_CONFIG": empty, "DOCKER_HOST": "ftp://box"}, errHas: `scheme "ftp" not supported`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep, err := Resolve(tc.host, func(k string) string { return tc.env[k] })
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Resolve = %+v, %v; want one line with %q", ep, err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tlsMode := ""
			if ep.TLS {
				tlsMode = "verify"
				if ep.SkipTLSVerify {
					tlsMode = "skip"
				}
			}
			if ep.Host != tc.want || ep.Context != tc.context || tlsMode != tc.tls || (ep.Cert != nil && ep.Key != nil) != tc.client {
				t.Errorf("Resolve = host %q context %q tls %q client cert %v; want %q %q %q %v",
					ep.Host, ep.Context, tlsMode, ep.Cert != nil && ep.Key != nil, tc.want, tc.context, tc.tls, tc.client)
			}
			if tlsMode == "verify" && ep.CA == nil {
				t.Error("TLS verified without a CA")
			}
		})
	}
}

func TestSSHArgs(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"ssh://box", "-o ConnectTimeout=30 -T -- box docker system dial-stdio"},
		{"ssh://me@box:2222", "-l me -p 2222 -o ConnectTimeout=30 -T -- box docker system dial-stdio"},
		{"ssh://me@box/run/user/1000/docker.sock", "-l me -o ConnectTimeout=30 -T -- box docker --host=unix:///run/user/1000/docker.sock system dial-stdio"},
		{"ssh://box/my dir/docker.sock", "-o ConnectTimeout=30 -T -- box docker '--host=unix:///my dir/docker.sock' system dial-stdio"},
	} {
		args, err := sshArgs(tc.host)
		if err != nil {
			t.Fatal(err)
		}
		// the remote command is one argument, as ssh hands it to a shell
		if got := strings.Join(args, " "); got != tc.want || !strings.HasPrefix(args[len(args)-1], "docker ") {
			t.Errorf("sshArgs(%s) = %q, want %q", tc.host, got, tc.want)
		}
	}
}

// pki is a CA with a server certificate for 127.0.0.1 and a client
// certificate, as `docker` TLS set-ups have them, in PEM.
type pki struct {
	ca, serverCert, serverKey, clientCert, clientKey []byte
	caCert                                           *x509.Certificate
}

func newPKI(t *testing.T) pki {
	t.Helper()
	key := func() (*ecdsa.PrivateKey, []byte) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return k, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	}
	now := time.Now()
	caKey, _ := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cnperf test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) ([]byte, []byte) {
		k, kp := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: ips,
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), kp
	}
	p := pki{ca: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), caCert: caCert}
	p.serverCert, p.serverKey = leaf(2, "engine", x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	p.clientCert, p.clientKey = leaf(3, "cnperf-client", x509.ExtKeyUsageClientAuth, nil)
	return p
}

// TestTLSHost: DOCKER_HOST=tcp:// with DOCKER_TLS_VERIFY and
// DOCKER_CERT_PATH against a loopback TLS listener that verifies the
// client's certificate, as `dockerd --tlsverify` does.
func TestTLSHost(t *testing.T) {
	p := newPKI(t)
	other := newPKI(t) // a CA that signed neither side
	serverPair, err := tls.X509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{serverPair},
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeEngine{t: t, apiVersion: "1.52", minAPI: "1.44"}
	f.serveOn(t, ln)
	host := "tcp://" + ln.Addr().String()

	certDir := func(ca, cert, key []byte) string {
		d := t.TempDir()
		for name, b := range map[string][]byte{"ca.pem": ca, "cert.pem": cert, "key.pem": key} {
			if b != nil {
				writeFile(t, filepath.Join(d, name), string(b))
			}
		}
		return d
	}
	for _, tc := range []struct {
		name   string
		env    map[string]string
		errHas string
	}{
		{"verified, client certificate", map[string]string{"DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": certDir(p.ca, p.clientCert, p.clientKey)}, ""},
		{"no client certificate", map[string]string{"DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": certDir(p.ca, nil, nil)}, "no Docker engine reachable"},
		{"server signed by another CA", map[string]string{"DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": certDir(other.ca, p.clientCert, p.clientKey)}, "certificate"},
		{"DOCKER_TLS: not verified", map[string]string{"DOCKER_TLS": "1", "DOCKER_CERT_PATH": certDir(other.ca, p.clientCert, p.clientKey)}, ""},
		{"plain http to a TLS port", map[string]string{}, "speaks TLS; set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"DOCKER_TLS_VERIFY", "DOCKER_TLS", "DOCKER_CERT_PATH", "DOCKER_CONTEXT"} {
				t.Setenv(k, tc.env[k])
			}
			t.Setenv("DOCKER_HOST", host)
			t.Setenv("DOCKER_CONFIG", t.TempDir())
			e, err := New("")
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err = e.Negotiate(ctx)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("Negotiate = %v, want an error with %q", err, tc.errHas)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Containers(ctx, LabelRun); err != nil || e.Version != "1.52" {
				t.Fatalf("over TLS: %v, version %s", err, e.Version)
			}
			f.mu.Lock()
			cn := f.clientCN
			f.mu.Unlock()
			if cn != "cnperf-client" {
				t.Errorf("the engine saw client certificate %q, want cnperf-client", cn)
			}
		})
	}
}

// TestSSHHost: DOCKER_HOST=ssh:// runs `ssh ... -- host docker system
// dial-stdio` (a fake ssh on PATH that records its arguments and runs a
// dial-stdio stand-in to the fake engine), and ssh's own error reaches the
// message.
func TestSSHHost(t *testing.T) {
	f := &fakeEngine{t: t, apiVersion: "1.52", minAPI: "1.44"}
	sock := f.listen(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	argsFile := filepath.Join(t.TempDir(), "ssh-args")
	writeFile(t, filepath.Join(bin, "ssh"), `#!/bin/sh
printf '%s\n' "$@" >> "$CNPERF_TEST_SSH_ARGS"
if [ -n "$CNPERF_TEST_SSH_FAIL" ]; then echo "$CNPERF_TEST_SSH_FAIL" >&2; exit 255; fi
CNPERF_TEST_DIAL_STDIO="$CNPERF_TEST_SOCK" exec "$CNPERF_TEST_SELF"
`)
	if err := os.Chmod(filepath.Join(bin, "ssh"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("CNPERF_TEST_SSH_ARGS", argsFile)
	t.Setenv("CNPERF_TEST_SOCK", sock)
	t.Setenv("CNPERF_TEST_SELF", self)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("DOCKER_CONTEXT", "")

	t.Setenv("DOCKER_HOST", "ssh://me@box:2222")
	e, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.Negotiate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Containers(ctx, LabelRun); err != nil || e.Version != "1.52" || e.Local {
		t.Fatalf("over ssh: %v, version %s, local %v", err, e.Version, e.Local)
	}
	e.Close()
	b, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	want := "-l\nme\n-p\n2222\n-o\nConnectTimeout=30\n-T\n--\nbox\ndocker system dial-stdio\n"
	if got := string(b); !strings.HasPrefix(got, want) {
		t.Errorf("ssh ran with\n%s\nwant\n%s", got, want)
	}

	t.Setenv("CNPERF_TEST_SSH_FAIL", "me@box: Permission denied (publickey).")
	e2, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	err = e2.Negotiate(ctx)
	if err == nil || !strings.Contains(err.Error(), "Permission denied (publickey)") || !strings.Contains(err.Error(), "ssh://me@box:2222") {
		t.Fatalf("Negotiate through a failing ssh = %v, want ssh's message and the host", err)
	}
	t.Log(err)
}
