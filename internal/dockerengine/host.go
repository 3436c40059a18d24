package dockerengine

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Endpoint is where an engine listens and how to reach it, resolved as
// the docker CLI resolves it (cli/command.resolveContextName and
// resolveDefaultDockerEndpoint, cli/context/docker.Endpoint):
//
//  1. a host given to New (a flag), then $DOCKER_HOST: the default
//     context with that host;
//  2. else $DOCKER_CONTEXT, then config.json's currentContext (in
//     $DOCKER_CONFIG, default ~/.docker): that context's docker endpoint,
//     contexts/meta/<sha256 of its name>/meta.json, and its TLS files in
//     contexts/tls/<sha256 of its name>/docker/;
//  3. else (or the context "default") the default socket.
//
// The default context's TLS comes from $DOCKER_TLS_VERIFY (TLS, server
// verified against $DOCKER_CERT_PATH/ca.pem, which must exist) or
// $DOCKER_TLS (TLS, not verified), with cert.pem and key.pem from the same
// folder when there; with no host, TLS means tcp://localhost:2376.
type Endpoint struct {
	Host          string // unix:///var/run/docker.sock, tcp://h:2376, ssh://me@h
	Context       string // the Docker context it comes from; "" for the default
	From          string // what chose it, for messages: "DOCKER_HOST", "DOCKER_CONTEXT"...
	TLS           bool   // tcp:// over TLS (https)
	SkipTLSVerify bool
	CA, Cert, Key []byte // PEM, nil when absent
	CertDir       string // where CA, Cert and Key were read
}

// String names the endpoint in messages.
func (ep Endpoint) String() string {
	if ep.Context != "" {
		return ep.Host + " (docker context " + ep.Context + ")"
	}
	return ep.Host
}

// Resolve finds the endpoint for host ("" = from the environment) with
// getenv (os.Getenv, or a table in tests).
func Resolve(host string, getenv func(string) string) (Endpoint, error) {
	from := "the host given"
	if host == "" {
		host, from = getenv("DOCKER_HOST"), "DOCKER_HOST"
	}
	if host != "" {
		return defaultEndpoint(host, from, getenv)
	}
	dir := configDir(getenv)
	name, from := getenv("DOCKER_CONTEXT"), "DOCKER_CONTEXT"
	if name == "" {
		cfgFile := filepath.Join(dir, "config.json")
		b, err := os.ReadFile(cfgFile)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Endpoint{}, fmt.Errorf("docker config %s: %v", cfgFile, err)
		}
		if err == nil {
			var cfg struct {
				CurrentContext string `json:"currentContext"`
			}
			if err := json.Unmarshal(b, &cfg); err != nil {
				return Endpoint{}, fmt.Errorf("docker config %s: %v; fix or remove it", cfgFile, err)
			}
			name, from = cfg.CurrentContext, "currentContext in "+cfgFile
		}
	}
	if name == "" || name == "default" {
		return defaultEndpoint("", "default", getenv)
	}
	return contextEndpoint(dir, name, from)
}

// configDir is the docker CLI's configuration folder.
func configDir(getenv func(string) string) string {
	if d := getenv("DOCKER_CONFIG"); d != "" {
		return d
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".docker")
}

// defaultEndpoint is the default context: host, and TLS from the
// environment.
func defaultEndpoint(host, from string, getenv func(string) string) (Endpoint, error) {
	ep := Endpoint{From: from}
	ep.TLS = getenv("DOCKER_TLS_VERIFY") != "" || getenv("DOCKER_TLS") != ""
	ep.SkipTLSVerify = ep.TLS && getenv("DOCKER_TLS_VERIFY") == ""
	h, err := normalizeHost(host, ep.TLS)
	if err != nil {
		return Endpoint{}, fmt.Errorf("%s %q: %v; use unix:///path, tcp://host:port or ssh://[user@]host[:port]", from, host, err)
	}
	ep.Host = h
	if !ep.TLS || !strings.HasPrefix(h, "tcp://") {
		ep.TLS, ep.SkipTLSVerify = false, false // a socket or ssh: TLS does not apply (as for the CLI)
		return ep, nil
	}
	ep.CertDir = getenv("DOCKER_CERT_PATH")
	if ep.CertDir == "" {
		ep.CertDir = configDir(getenv)
	}
	ca := filepath.Join(ep.CertDir, "ca.pem")
	if ep.CA, err = os.ReadFile(ca); err != nil {
		return Endpoint{}, fmt.Errorf("TLS to %s needs %s (DOCKER_CERT_PATH names the folder of ca.pem, cert.pem, key.pem): %v", h, ca, err)
	}
	ep.Cert, _ = os.ReadFile(filepath.Join(ep.CertDir, "cert.pem"))
	ep.Key, _ = os.ReadFile(filepath.Join(ep.CertDir, "key.pem"))
	return ep, nil
}

// contextEndpoint reads a Docker context's docker endpoint and TLS files.
func contextEndpoint(dir, name, from string) (Endpoint, error) {
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:])
	meta := filepath.Join(dir, "contexts", "meta", id, "meta.json")
	b, err := os.ReadFile(meta)
	if errors.Is(err, fs.ErrNotExist) {
		return Endpoint{}, fmt.Errorf("docker context %q (%s) not found: no %s; list them with docker context ls, or set DOCKER_HOST", name, from, meta)
	}
	if err != nil {
		return Endpoint{}, fmt.Errorf("docker context %q: %v", name, err)
	}
	var m struct {
		Endpoints map[string]struct {
			Host          string
			SkipTLSVerify bool
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Endpoint{}, fmt.Errorf("docker context %q: %s: %v", name, meta, err)
	}
	d, ok := m.Endpoints["docker"]
	if !ok || d.Host == "" {
		return Endpoint{}, fmt.Errorf("docker context %q (%s) has no docker endpoint host in %s", name, from, meta)
	}
	h, err := normalizeHost(d.Host, false)
	if err != nil {
		return Endpoint{}, fmt.Errorf("docker context %q: host %q: %v", name, d.Host, err)
	}
	ep := Endpoint{Host: h, Context: name, From: from, SkipTLSVerify: d.SkipTLSVerify}
	ep.CertDir = filepath.Join(dir, "contexts", "tls", id, "docker")
	ep.CA, _ = os.ReadFile(filepath.Join(ep.CertDir, "ca.pem"))
	ep.Cert, _ = os.ReadFile(filepath.Join(ep.CertDir, "cert.pem"))
	ep.Key, _ = os.ReadFile(filepath.Join(ep.CertDir, "key.pem"))
	// the CLI speaks TLS to a context's tcp host when it has TLS files
	// or skips verification
	ep.TLS = strings.HasPrefix(h, "tcp://") && (ep.CA != nil || ep.Cert != nil || ep.Key != nil || ep.SkipTLSVerify)
	return ep, nil
}

// normalizeHost checks a host as the docker CLI's opts.ParseHost does:
// "" is the default socket (tcp://localhost:2376 with TLS), a tcp:// host
// without a port gets 2375, a bare "h:p" is tcp.
func normalizeHost(host string, tls bool) (string, error) {
	host = strings.TrimSpace(host)
	if host == "" {
		if tls {
			return "tcp://localhost:2376", nil
		}
		return DefaultHost, nil
	}
	proto, rest, ok := strings.Cut(host, "://")
	if !ok {
		proto, rest = "tcp", host
	}
	switch proto {
	case "unix":
		if rest == "" {
			return DefaultHost, nil
		}
		return "unix://" + rest, nil
	case "tcp":
		u, err := url.Parse("tcp://" + rest)
		if err != nil || u.Host == "" {
			return "", errors.New("not a host:port")
		}
		h, p, err := net.SplitHostPort(u.Host)
		if err != nil {
			h, p = u.Hostname(), "2375"
		}
		if h == "" {
			h = "localhost"
		}
		if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
			return "", fmt.Errorf("bad port %q", p)
		}
		return "tcp://" + net.JoinHostPort(h, p), nil
	case "ssh":
		if _, err := sshArgs(host); err != nil {
			return "", err
		}
		return host, nil
	}
	return "", fmt.Errorf("scheme %q not supported", proto)
}

// tlsConfig is the client side of an endpoint's TLS, as the docker CLI
// makes it: its CA alone as the roots when given (else the system's), its
// client certificate when given, TLS 1.2 at least.
func (ep Endpoint) tlsConfig() (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: ep.SkipTLSVerify}
	if ep.CA != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ep.CA) {
			return nil, fmt.Errorf("%s: ca.pem holds no PEM certificate", ep.CertDir)
		}
		c.RootCAs = pool
	}
	if ep.Cert != nil && ep.Key != nil {
		if b, _ := pem.Decode(ep.Key); b != nil && x509.IsEncryptedPEMBlock(b) { //nolint:staticcheck // refused, as the CLI does
			return nil, fmt.Errorf("%s: key.pem is encrypted; the docker CLI and cnperf need it unencrypted", ep.CertDir)
		}
		cert, err := tls.X509KeyPair(ep.Cert, ep.Key)
		if err != nil {
			return nil, fmt.Errorf("%s: cert.pem and key.pem: %v", ep.CertDir, err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// sshArgs are ssh's arguments to reach an ssh:// host's engine, as the
// docker CLI's connhelper gives them:
//
//	ssh [-l user] [-p port] -o ConnectTimeout=30 -T -- host docker [--host=unix://path] system dial-stdio
func sshArgs(host string) ([]string, error) {
	u, err := url.Parse(host)
	if err != nil {
		return nil, err
	}
	if u.Hostname() == "" {
		return nil, errors.New("ssh:// needs a host name")
	}
	if _, ok := u.User.Password(); ok {
		return nil, errors.New("a password in an ssh:// host is not supported; use ssh keys or an agent")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("an ssh:// host takes no query or fragment")
	}
	var args []string
	if u.User != nil && u.User.Username() != "" {
		args = append(args, "-l", u.User.Username())
	}
	if u.Port() != "" {
		args = append(args, "-p", u.Port())
	}
	args = append(args, "-o", "ConnectTimeout=30", "-T", "--", u.Hostname())
	remote := "docker system dial-stdio"
	if strings.Trim(u.Path, "/") != "" {
		remote = "docker " + shQuote("--host=unix://"+u.Path) + " system dial-stdio"
	}
	return append(args, remote), nil
}

// shQuote quotes s for the remote shell ssh hands its command to.
func shQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-=:+@,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
