// Package nginx runs a real Debian nginx as the server of the constant-rate
// experiment, configured as the seed-000 study did: one worker per CPU,
// pinned, access log off, a static file of the requested size, keep-alive
// connections that last the whole run. It runs in the foreground as a
// child of the caller (the agent, already inside the pod's namespace), in
// its own process group, and dies with it.
package nginx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrMissing says nginx is not installed.
var ErrMissing = errors.New("nginx not found; install it (apt-get install nginx-light) or use --server builtin")

// fallback is where nginx lives when it is not on PATH (sbin is not on
// every PATH).
var fallback = []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"}

// Binary finds the nginx executable.
func Binary() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	for _, p := range fallback {
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ErrMissing
}

// Options describe one nginx instance.
type Options struct {
	Dir      string // state folder: config, document root, logs, pid
	Port     int
	BodySize int // size of the static file served at /
	Workers  int // default: one per CPU the caller may run on
	// CPUs are the CPUs the workers are bound to, one each in turn;
	// default: the caller's affinity (so taskset or --pin places nginx).
	CPUs []int
}

// affinity is the calling thread's CPU set, in ascending order.
func affinity() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for i := 0; i < 1024 && len(cpus) < set.Count(); i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// cpuMask renders cpus as nginx's binary mask (rightmost digit = CPU 0).
func cpuMask(cpus []int) string {
	hi := 0
	for _, c := range cpus {
		hi = max(hi, c)
	}
	b := []byte(strings.Repeat("0", hi+1))
	for _, c := range cpus {
		b[hi-c] = '1'
	}
	return string(b)
}

// Config renders nginx.conf for o.
func Config(o Options) string {
	cpus := o.CPUs
	if len(cpus) == 0 {
		cpus = affinity()
	}
	workers := o.Workers
	if workers <= 0 {
		workers = max(len(cpus), 1)
	}
	// "auto" alone binds worker k to CPU k of the whole machine, whatever
	// the caller's affinity; the mask keeps the workers on the CPUs given
	aff := "auto"
	if len(cpus) > 0 {
		aff = "auto " + cpuMask(cpus)
	}
	return fmt.Sprintf(`# written by cnperf: the seed-000 study's nginx
daemon off;
master_process on;
user root;
worker_processes %d;
worker_cpu_affinity %[4]s;
worker_rlimit_nofile 200000;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events {
    worker_connections 65536;
    multi_accept on;
}
http {
    access_log off;
    sendfile on;
    tcp_nopush off;
    tcp_nodelay on;
    keepalive_timeout 300s;
    keepalive_requests 1000000000;
    open_file_cache max=16;
    default_type text/plain;
    server_tokens off;
    client_body_temp_path %[2]s/tmp/body;
    proxy_temp_path %[2]s/tmp/proxy;
    fastcgi_temp_path %[2]s/tmp/fastcgi;
    uwsgi_temp_path %[2]s/tmp/uwsgi;
    scgi_temp_path %[2]s/tmp/scgi;
    server {
        listen %[3]d reuseport backlog=65535;
        root %[2]s/www;
        location / { index index.html; }
    }
}
`, workers, o.Dir, o.Port, aff)
}

// Server is a running nginx.
type Server struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	dir  string
}

// Start writes the configuration and the static file into o.Dir, starts
// nginx and returns once it accepts connections on o.Port.
func Start(ctx context.Context, o Options) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if o.BodySize < 0 || o.BodySize > 1<<30 {
		return nil, fmt.Errorf("nginx file size %d out of range", o.BodySize)
	}
	for _, d := range []string{"www", "tmp"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("nginx state: %w", err)
		}
	}
	body := strings.Repeat(".", o.BodySize)
	if err := os.WriteFile(filepath.Join(o.Dir, "www", "index.html"), []byte(body), 0o644); err != nil {
		return nil, fmt.Errorf("nginx file: %w", err)
	}
	conf := filepath.Join(o.Dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(Config(o)), 0o644); err != nil {
		return nil, fmt.Errorf("nginx config: %w", err)
	}
	cmd := exec.Command(bin, "-c", conf, "-p", o.Dir, "-e", filepath.Join(o.Dir, "error.log"))
	log, err := os.Create(filepath.Join(o.Dir, "nginx.out"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	// its own process group, so that Stop reaches the workers too; killed
	// if the agent dies
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting nginx: %w", err)
	}
	s := &Server{cmd: cmd, done: make(chan struct{}), dir: o.Dir}
	go func() {
		s.err = cmd.Wait()
		log.Close()
		close(s.done)
	}()
	addr := fmt.Sprintf("127.0.0.1:%d", o.Port)
	deadline := time.Now().Add(5 * time.Second)
	for {
		select {
		case <-s.done:
			return nil, fmt.Errorf("nginx exited at start: %s", s.tail())
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		default:
		}
		if c, err := net.DialTimeout("tcp4", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("nginx did not listen on port %d within 5s: %s", o.Port, s.tail())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *Server) tail() string {
	var out []string
	for _, f := range []string{"nginx.out", "error.log"} {
		b, _ := os.ReadFile(filepath.Join(s.dir, f))
		if t := strings.TrimSpace(string(b)); t != "" {
			lines := strings.Split(t, "\n")
			out = append(out, lines[max(0, len(lines)-3):]...)
		}
	}
	if len(out) == 0 {
		return "no output"
	}
	return strings.Join(out, "; ")
}

// Stop ends nginx: a fast shutdown (SIGTERM) to the group, then SIGKILL.
func (s *Server) Stop() {
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(2 * time.Second):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // workers left behind, if any
	<-s.done
}

// PID is the master's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }
