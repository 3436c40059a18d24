package nginx

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ProxyOptions describe nginx as a load balancer (seed 002's): one
// upstream group over Upstreams, each request to one of them chosen at
// random (equal weights), every request logged with the balancer's
// blocking time to the backend it went to.
type ProxyOptions struct {
	Dir       string   // state folder: config, logs, pid
	Port      int      // where the balancer listens
	Upstreams []string // "ADDR:PORT" of each backend, equal weights
	Workers   int      // worker processes (default 1)
}

// AccessLog is the proxy's access log inside Dir.
const AccessLog = "access.log"

// ProxyLogFormat is the access log's line: the backend a request went to,
// its status, the three upstream times nginx keeps (seconds, millisecond
// resolution), the whole request's time and the client's status.
const ProxyLogFormat = "$upstream_addr $upstream_status $upstream_connect_time $upstream_header_time $upstream_response_time $request_time $status"

// ProxyConfig renders nginx.conf for a load balancer. Each request goes
// to a backend chosen uniformly at random (nginx's random method), not
// round-robin: in a fixed rotation every backend holds a fixed place in
// the sequence, and a client that sends in bursts (catching up after a
// stall) has the first of each burst served before the rest, so a
// backend's time would depend on its place in the list. A backend that
// fails stays in the rotation (max_fails=0) and a failed request is not
// retried on another one (proxy_next_upstream off), so every backend gets
// its share and every log line names one backend. Each proxied request
// opens a new connection to its backend (no upstream keepalive): the
// blocking time includes the connect, as behind the study's cloud balancer.
func ProxyConfig(o ProxyOptions) string {
	workers := o.Workers
	if workers <= 0 {
		workers = 1
	}
	var up strings.Builder
	for _, u := range o.Upstreams {
		fmt.Fprintf(&up, "        server %s max_fails=0;\n", u)
	}
	return fmt.Sprintf(`# written by cnperf: seed 002's load balancer
daemon off;
master_process on;
user root;
worker_processes %d;
worker_rlimit_nofile 65536;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events {
    worker_connections 16384;
    multi_accept on;
}
http {
    log_format blocking '%[5]s';
    access_log %[2]s/%[6]s blocking;
    tcp_nodelay on;
    keepalive_timeout 300s;
    keepalive_requests 1000000000;
    server_tokens off;
    client_body_temp_path %[2]s/tmp/body;
    proxy_temp_path %[2]s/tmp/proxy;
    fastcgi_temp_path %[2]s/tmp/fastcgi;
    uwsgi_temp_path %[2]s/tmp/uwsgi;
    scgi_temp_path %[2]s/tmp/scgi;
    upstream backends {
        random;
%[4]s    }
    server {
        listen %[3]d reuseport backlog=65535;
        location / {
            proxy_pass http://backends;
            proxy_next_upstream off;
            proxy_connect_timeout 2s;
            proxy_read_timeout 5s;
        }
    }
}
`, workers, o.Dir, o.Port, up.String(), ProxyLogFormat, AccessLog)
}

// WriteProxy writes the balancer's configuration into o.Dir and returns
// the command line that runs it in the foreground (its caller decides
// where: the lab starts it inside a pod's namespace).
func WriteProxy(o ProxyOptions) ([]string, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if len(o.Upstreams) == 0 {
		return nil, fmt.Errorf("nginx proxy: no upstream")
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "tmp"), 0o755); err != nil {
		return nil, fmt.Errorf("nginx state: %w", err)
	}
	conf := filepath.Join(o.Dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(ProxyConfig(o)), 0o644); err != nil {
		return nil, fmt.Errorf("nginx config: %w", err)
	}
	return []string{bin, "-c", conf, "-p", o.Dir, "-e", filepath.Join(o.Dir, "error.log")}, nil
}

// ProxyLine is one request of the balancer's access log. Times are in
// microseconds, whole milliseconds as nginx logs them; a time nginx did
// not have (no connection made) is -1.
type ProxyLine struct {
	Upstream       string
	UpstreamStatus int // 0 when none answered
	ConnectUs      int64
	HeaderUs       int64
	ResponseUs     int64
	RequestUs      int64
	Status         int
}

// ParseProxyLine reads one line in ProxyLogFormat.
func ParseProxyLine(s string) (ProxyLine, error) {
	f := strings.Fields(s)
	if len(f) != 7 {
		return ProxyLine{}, fmt.Errorf("access log line %q: %d fields, want 7", s, len(f))
	}
	l := ProxyLine{Upstream: f[0]}
	var err error
	if f[1] != "-" {
		if l.UpstreamStatus, err = strconv.Atoi(f[1]); err != nil {
			return l, fmt.Errorf("access log line %q: upstream status: %w", s, err)
		}
	}
	for i, dst := range []*int64{&l.ConnectUs, &l.HeaderUs, &l.ResponseUs, &l.RequestUs} {
		if *dst, err = seconds(f[2+i]); err != nil {
			return l, fmt.Errorf("access log line %q: %w", s, err)
		}
	}
	if l.Status, err = strconv.Atoi(f[6]); err != nil {
		return l, fmt.Errorf("access log line %q: status: %w", s, err)
	}
	return l, nil
}

// seconds parses nginx's "0.001" (or "-") into µs.
func seconds(s string) (int64, error) {
	if s == "-" {
		return -1, nil
	}
	sec, frac, _ := strings.Cut(s, ".")
	if !digits(sec) || !digits(frac) && frac != "" {
		return 0, fmt.Errorf("time %q", s)
	}
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("time %q", s)
	}
	us := n * 1e6
	if frac != "" {
		if len(frac) > 6 {
			return 0, fmt.Errorf("time %q", s)
		}
		m, err := strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
		if err != nil || m < 0 {
			return 0, fmt.Errorf("time %q", s)
		}
		us += m
	}
	return us, nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// ReadProxyLog reads the lines of the access log from byte offset on; a
// last line not yet complete is left for the next read. It returns the
// lines, how many could not be parsed (counted, not fatal: one odd line
// must not lose a round) and the offset after the last whole line.
func ReadProxyLog(path string, offset int64) (lines []ProxyLine, bad int, next int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, offset, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, 0, offset, err
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err != nil { // io.EOF: an unfinished line waits
			return lines, bad, offset, nil
		}
		offset += int64(len(line))
		pl, perr := ParseProxyLine(strings.TrimSpace(line))
		if perr != nil {
			bad++
			continue
		}
		lines = append(lines, pl)
	}
}
