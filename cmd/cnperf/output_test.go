package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/workload"
)

// outFixture is what the output flags of every command are tried with:
// two results files, a scenario file, a binary, a server to load.
type outFixture struct {
	dir, a, b, scenario, binary, server string
}

// outputCases are every output flag of every command (issue 34 finding
// 1), each as the command line writing that output at OUT, and one of its
// inputs ("" when it reads none).
var outputCases = []struct {
	name string
	dir  bool // the output is a folder of files
	// lab: the command measures in a lab (root); only its checks before
	// any work run without root
	lab   bool
	args  func(f outFixture, out string) []string
	input func(f outFixture) string
}{
	{"report --html", false, false, func(f outFixture, out string) []string { return []string{"report", f.a, "--html", out} }, func(f outFixture) string { return f.a }},
	{"report --csv", true, false, func(f outFixture, out string) []string { return []string{"report", f.a, "--csv", out} }, nil},
	{"report --openmetrics", false, false, func(f outFixture, out string) []string { return []string{"report", f.a, "--openmetrics", out} }, func(f outFixture) string { return f.a }},
	{"report --ndjson", false, false, func(f outFixture, out string) []string { return []string{"report", f.a, "--ndjson", out} }, func(f outFixture) string { return f.a }},
	{"report --hgrm", true, false, func(f outFixture, out string) []string { return []string{"report", f.a, "--hgrm", out} }, nil},
	{"compare --json", false, false, func(f outFixture, out string) []string { return []string{"compare", f.a, f.b, "--json", out} }, func(f outFixture) string { return f.b }},
	{"compare --junit", false, false, func(f outFixture, out string) []string {
		return []string{"compare", f.a, f.b, "--fail-on-regression", "10", "--allow-undecided", "--junit", out}
	}, func(f outFixture) string { return f.b }},
	{"image build --out", false, false, func(f outFixture, out string) []string {
		return []string{"image", "build", "--binary", f.binary, "--out", out}
	}, func(f outFixture) string { return f.binary }},
	{"load --json", false, false, func(f outFixture, out string) []string {
		return []string{"load", "tcp_rr", f.server, "--duration", "200ms", "--cpu-latency", "off", "--json", out}
	}, nil},
	{"load --hgrm", true, false, func(f outFixture, out string) []string {
		return []string{"load", "tcp_rr", f.server, "--duration", "200ms", "--cpu-latency", "off", "--hgrm", out}
	}, nil},
	{"run --out", false, true, func(f outFixture, out string) []string {
		return []string{"run", "-f", f.scenario, "--quiet", "--out", out}
	}, func(f outFixture) string { return f.scenario }},
	{"run --html", false, true, func(f outFixture, out string) []string {
		return []string{"run", "-f", f.scenario, "--quiet", "--html", out}
	}, func(f outFixture) string { return f.scenario }},
	{"run --csv", true, true, func(f outFixture, out string) []string {
		return []string{"run", "-f", f.scenario, "--quiet", "--csv", out}
	}, nil},
	{"run --openmetrics", false, true, func(f outFixture, out string) []string {
		return []string{"run", "-f", f.scenario, "--quiet", "--openmetrics", out}
	}, func(f outFixture) string { return f.scenario }},
	{"run --ndjson", false, true, func(f outFixture, out string) []string {
		return []string{"run", "-f", f.scenario, "--quiet", "--ndjson", out}
	}, func(f outFixture) string { return f.scenario }},
	{"recommend --out", false, true, func(f outFixture, out string) []string {
		return []string{"recommend", "--profile", "latency", "--networks", "host,bridge", "--duration", "200ms", "--repeat", "1", "--quiet", "--out", out}
	}, nil},
	{"bench lab --out", false, true, func(f outFixture, out string) []string {
		return []string{"bench", "lab", "--hosts", "1", "--pods-per-host", "2", "--kernel-wait", "0", "--out", out}
	}, nil},
}

// TestOutputRule tries every output flag of every command against (a)
// one of its inputs, (b) a file cnperf did not write (for a folder: one
// of the files it would write) and (c) a full file system holding the
// output of an earlier run: the input and the foreign file stay as they
// were and the command exits 2 (bad usage, nothing done); on the full
// file system it exits 1, the earlier output is unchanged and no partial
// or temporary file is left. Issue 34 finding 1: report X --html X, compare
// a b --json b, image build --binary B --out B... exited 0, the target
// replaced; finding 6: --csv left a truncated params.csv on a full disk.
func TestOutputRule(t *testing.T) {
	bin := cnperf(t)
	f := outFixture{dir: t.TempDir()}
	example, err := os.ReadFile("../../docs/examples/default.json")
	if err != nil {
		t.Fatal(err)
	}
	f.a, f.b = filepath.Join(f.dir, "a.json"), filepath.Join(f.dir, "b.json")
	f.scenario, f.binary = filepath.Join(f.dir, "scenarios.yaml"), filepath.Join(f.dir, "cnperf-static")
	scenario := "name: tiny\nnetworks: baseline\nworkloads: tcp_rr\nplacement: same-host\nduration: 200ms\nrepeat: 1\n"
	for p, b := range map[string][]byte{f.a: example, f.b: example, f.scenario: []byte(scenario)} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	staticProgram(t, f.binary)
	f.server = loadServer(t)
	run := func(t *testing.T, args []string) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = t.TempDir() // default outputs (run's results) land there
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("cnperf %s: %v", strings.Join(args, " "), err)
		}
		return cmd.ProcessState.ExitCode(), stderr.String()
	}
	for _, c := range outputCases {
		t.Run(c.name, func(t *testing.T) {
			if c.input != nil {
				t.Run("an input", func(t *testing.T) {
					in := c.input(f)
					before := sum(t, in)
					code, stderr := run(t, c.args(f, in))
					if code != 2 || !strings.Contains(stderr, "an input of this command") {
						t.Errorf("exit %d, want 2 naming the input: %s", code, stderr)
					}
					if sum(t, in) != before {
						t.Errorf("the input %s changed", in)
					}
				})
			}
			t.Run("a foreign file", func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "notes.txt")
				target := out
				if c.dir {
					out = t.TempDir()
					target = filepath.Join(out, "params.csv")
					if strings.Contains(c.name, "hgrm") {
						target = filepath.Join(out, hgrmName(c.name))
					}
				}
				if err := os.WriteFile(target, []byte("my notes\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				code, stderr := run(t, c.args(f, out))
				if code != 2 || !strings.Contains(stderr, "exists and is not") {
					t.Errorf("exit %d, want 2 refusing the foreign file: %s", code, stderr)
				}
				if b, _ := os.ReadFile(target); string(b) != "my notes\n" {
					t.Errorf("the foreign file now holds %q", b)
				}
			})
			t.Run("a full file system", func(t *testing.T) {
				why := "mounts a tmpfs"
				if c.lab {
					why += "; the command measures in a lab first"
				}
				testutil.NeedRoot(t, why)
				// the output of an earlier run, which may be replaced
				ref := filepath.Join(t.TempDir(), "ref")
				if code, stderr := run(t, c.args(f, ref)); code != 0 {
					t.Fatalf("writing the reference output: exit %d: %s", code, stderr)
				}
				full := fullFS(t, ref)
				out := filepath.Join(full, "ref")
				before := tree(t, full)
				code, stderr := run(t, c.args(f, out))
				if code != 1 {
					t.Errorf("exit %d on a full file system, want 1: %s", code, stderr)
				}
				if after := tree(t, full); after != before {
					t.Errorf("the full file system changed:\nbefore:\n%s\nafter:\n%s", before, after)
				}
			})
		})
	}

	// outputs of one command on one path
	t.Run("two outputs, one file", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "r.json")
		for _, args := range [][]string{
			{"run", "--networks", "baseline", "--dry-run", "--out", out, "--html", out},
			{"report", f.a, "--html", out, "--ndjson", out},
			{"compare", f.a, f.b, "--fail-on-regression", "10", "--json", out, "--junit", out},
		} {
			code, stderr := run(t, args)
			if code != 2 || !strings.Contains(stderr, "are one file") {
				t.Errorf("cnperf %s: exit %d, want 2: %s", strings.Join(args, " "), code, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("cnperf %s wrote %s", strings.Join(args, " "), out)
			}
		}
	})
}

// hgrmName is a file the --hgrm case writes: one of docs/examples/
// default.json's for report, of a tcp_rr load for load.
func hgrmName(name string) string {
	if strings.HasPrefix(name, "load") {
		return "standalone_tcp_rr.hgrm"
	}
	return "baseline_cross-host_tcp_rr.hgrm"
}

// loadServer serves tcp_rr on 127.0.0.1 for the test's length.
func loadServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	w, err := workload.Get("tcp_rr")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, served := make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := w.Serve(ctx, workload.Params{Port: port, MessageSize: 16, Duration: time.Hour}, func() { close(ready) })
		served <- err
	}()
	t.Cleanup(func() { cancel(); <-served })
	select {
	case <-ready:
	case err := <-served:
		t.Fatalf("tcp_rr server: %v", err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// fullFS mounts a 16 KiB tmpfs holding a copy of ref (a file or folder)
// and fills what is left of it: no file can grow there.
func fullFS(t *testing.T, ref string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=16k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	// an earlier output too big for 16 KiB is not kept: the command must
	// then leave none
	if out, err := exec.Command("cp", "-r", ref, filepath.Join(dir, "ref")).CombinedOutput(); err != nil {
		_ = os.RemoveAll(filepath.Join(dir, "ref"))
		t.Logf("the earlier output does not fit in 16 KiB (%s); trying with none", bytes.TrimSpace(out))
	}
	fill, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer fill.Close()
	block := make([]byte, 512)
	for {
		if _, err := fill.Write(block); err != nil {
			break
		}
	}
	return dir
}

// tree lists every file under dir with a digest of its content.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if info.IsDir() {
			fmt.Fprintf(&b, "%s/\n", rel)
			return nil
		}
		fmt.Fprintf(&b, "%s %s\n", rel, sum(t, p))
		return nil
	})
	return b.String()
}

// sum is a digest of the file at path.
func sum(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("sha256sum", path).Output()
	if err != nil {
		t.Fatalf("sha256sum %s: %v", path, err)
	}
	return strings.Fields(string(out))[0]
}

// staticProgram builds a small static program at path, standing in for
// cnperf in an image.
func staticProgram(t *testing.T, path string) {
	t.Helper()
	src := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module fakeagent\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() {}\n"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-o", path, ".")
	build.Dir, build.Env = src, append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building a static binary: %v: %s", err, out)
	}
}
