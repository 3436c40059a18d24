package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
)

// statusRE is the live status line: [cell k/N, round r/R, m:ss elapsed,
// ETA hh:mm:ss, m:ss left].
var statusRE = regexp.MustCompile(`\[cell (\d+)/(\d+), round (\d+)/(\d+), ([\d:]+) elapsed, ETA (\d\d:\d\d:\d\d), ([\d:]+) left\]`)

// clockSeconds reads m:ss or h:mm:ss.
func clockSeconds(s string) float64 {
	var total float64
	for _, p := range strings.Split(s, ":") {
		n, _ := strconv.Atoi(p)
		total = total*60 + float64(n)
	}
	return total
}

// TestStatusLineInTmux runs a short real lab run in a tmux pane (a real
// terminal), reads the pane four times a second, and checks that the
// status line is there, kept on one line, and that its ETA (the capture's
// time plus "left") is within 30 % of the run's length from the actual
// end, once the first cell has finished; after the run the line is gone
// (the table starts on a clean line). Issue 27 item 4.
func TestStatusLineInTmux(t *testing.T) {
	labtest.NeedRoot(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("needs tmux (apt-get install tmux)")
	}
	dir := t.TempDir()
	id := "tmx" + lab.NewID()[:6]
	sock := "cnperf-test-" + id // a tmux server of its own
	// its socket in the test's folder: a server that ends leaves its
	// socket behind (/tmp/tmux-0/cnperf-test-... was left so)
	tmuxDir := t.TempDir()
	tmux := func(args ...string) (string, error) {
		cmd := exec.Command("tmux", append([]string{"-L", sock}, args...)...)
		cmd.Env = append(os.Environ(), "TMUX_TMPDIR="+tmuxDir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	script := fmt.Sprintf("date +%%s.%%N > %[1]s/start; CNPERF_RUN_ID=%[2]s %[3]s run --networks bridge,vxlan --workloads tcp_rr,tcp_stream --duration 1s --repeat 2 --out %[1]s/run.json; echo $? > %[1]s/status; date +%%s.%%N > %[1]s/end; sleep 600",
		dir, id, cnperf(t))
	if out, err := tmux("new-session", "-d", "-s", "run", "-x", "200", "-y", "50", script); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() {
		_, _ = tmux("kill-server")
		_, _ = exec.Command(cnperf(t), "clean", "--id", id, "--force").CombinedOutput()
	})

	type sample struct {
		at          time.Time
		cell, cells int
		left        float64
		line        string
	}
	var samples []sample
	deadline := time.Now().Add(3 * time.Minute)
	var endFile []byte
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(dir, "end")); err == nil && len(b) > 0 {
			endFile = b
			break
		}
		pane, err := tmux("capture-pane", "-p", "-t", "run")
		at := time.Now()
		if err != nil {
			t.Fatalf("capture-pane: %v: %s", err, pane)
		}
		lines := statusLines(pane)
		if len(lines) > 1 {
			t.Fatalf("%d status lines on the screen at once (the line is not redrawn in place):\n%s", len(lines), pane)
		}
		for _, l := range lines {
			m := statusRE.FindStringSubmatch(l)
			k, _ := strconv.Atoi(m[1])
			n, _ := strconv.Atoi(m[2])
			samples = append(samples, sample{at: at, cell: k, cells: n, left: clockSeconds(m[7]), line: l})
		}
		time.Sleep(250 * time.Millisecond)
	}
	if endFile == nil {
		t.Fatalf("the run did not end within 3 minutes")
	}
	readTime := func(name string) time.Time {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return time.Unix(0, int64(f*1e9))
	}
	start, end := readTime("start"), readTime("end")
	if st, _ := os.ReadFile(filepath.Join(dir, "status")); strings.TrimSpace(string(st)) != "0" {
		pane, _ := tmux("capture-pane", "-p", "-S", "-100", "-t", "run")
		t.Fatalf("cnperf run exited %s:\n%s", st, pane)
	}
	pane, _ := tmux("capture-pane", "-p", "-S", "-200", "-t", "run")
	if l := statusLines(pane); len(l) > 0 {
		t.Errorf("a status line stayed after the run: %q", l)
	}
	if !strings.Contains(pane, "tcp_rr") {
		t.Errorf("the pane holds no progress lines:\n%s", pane)
	}
	length := end.Sub(start).Seconds()
	checked, worst := 0, 0.0
	for _, s := range samples {
		if s.cell < 2 { // no cell finished yet: the plan's guesses alone
			continue
		}
		predicted := s.at.Add(time.Duration(s.left * float64(time.Second)))
		errPct := 100 * predicted.Sub(end).Abs().Seconds() / length
		worst = max(worst, errPct)
		checked++
		if errPct > 30 {
			t.Errorf("%s at %.1f s: ends at %.1f s, the run ended at %.1f s: %.0f %% of its %.1f s off",
				s.line, s.at.Sub(start).Seconds(), predicted.Sub(start).Seconds(), length, errPct, length)
		}
	}
	if checked < 10 {
		t.Fatalf("%d status lines read after the first cell (want 10 or more) in %d samples", checked, len(samples))
	}
	t.Logf("run %.1f s, %d status lines read, the ETA at most %.1f %% of the run's length off the actual end", length, checked, worst)
}

// statusLines are the status lines on a captured screen.
func statusLines(pane string) []string {
	var out []string
	for _, l := range strings.Split(pane, "\n") {
		if statusRE.MatchString(l) {
			out = append(out, statusRE.FindString(l))
		}
	}
	return out
}

// TestStoredProgressRun recomputes docs/progress.md's claims from the
// stored 2-minute capture: a run of 1.5 to 2.5 minutes; the first
// status line (the plan's guesses alone) within 10 % and every one after
// the first finished cell within 2 % of the run's length off the end.
func TestStoredProgressRun(t *testing.T) {
	b, err := os.ReadFile("../../docs/examples/progress-2min.txt")
	if err != nil {
		t.Fatal(err)
	}
	var start, end float64
	var errs []float64 // % of the run's length, in capture order
	var cells []int
	type sample struct {
		at   float64
		line string
	}
	var samples []sample
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if rest, ok := strings.CutPrefix(l, "# start "); ok {
			if _, err := fmt.Sscanf(rest, "%f end %f", &start, &end); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			continue
		}
		if strings.HasPrefix(l, "#") {
			continue
		}
		at, line, _ := strings.Cut(l, " ")
		f, err := strconv.ParseFloat(at, 64)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		samples = append(samples, sample{f, line})
	}
	length := end - start
	if length < 90 || length > 150 {
		t.Fatalf("the stored run took %.1f s, not about 2 minutes", length)
	}
	left := regexp.MustCompile(`([\d:]+) left\]$`)
	for _, s := range samples {
		m := left.FindStringSubmatch(s.line)
		if m == nil {
			t.Fatalf("not a status line: %q", s.line)
		}
		errs = append(errs, 100*math.Abs(s.at+clockSeconds(m[1])-end)/length)
		k := 0
		if c := statusRE.FindStringSubmatch(s.line); c != nil {
			k, _ = strconv.Atoi(c[1])
		}
		cells = append(cells, k)
	}
	if len(errs) < 20 || cells[0] != 0 || errs[0] > 10 {
		t.Fatalf("%d samples; the first (%q) %.1f %% off; want 20 or more, the first from the plan within 10 %%", len(errs), samples[0].line, errs[0])
	}
	for i, e := range errs {
		if cells[i] >= 2 && e > 2 {
			t.Errorf("%q at %.1f s: %.1f %% of the run's length off its end", samples[i].line, samples[i].at-start, e)
		}
	}
}

// TestRunDryRun: --dry-run prints the deployments, their cells and the
// estimate, and writes nothing (no results folder).
func TestRunDryRun(t *testing.T) {
	t.Chdir(t.TempDir())
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--duration", "4s", "--repeat", "2"}, []string{
			"baseline: same-host tcp_rr, same-host tcp_stream, cross-host tcp_rr, cross-host tcp_stream\n",
			"vxlan: cross-host tcp_rr, cross-host tcp_stream\n",
			"6 deployments, 14 cells, 2 rounds: about 2 min (28 cell runs measuring 1:52, 250ms set-up each;"}},
		{[]string{"--networks", "vxlan", "--workloads", "tcp_rr", "--duration", "10s", "--repeat", "1", "--no-baseline"}, []string{
			"vxlan: cross-host tcp_rr\n",
			"1 deployment, 1 cell, 1 round: about 10 s (1 cell run measuring 0:10, 250ms set-up each; 1 deployment built at"}},
		{[]string{"--networks", "vxlan", "--workloads", "tcp_rr", "--neighbours", "busy:2", "--duration", "20s", "--repeat", "3", "--no-baseline"}, []string{
			"3 cell runs measuring 2:01,"}}, // without and with, 300 ms warm-up
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, err := stdout(t, func() error { return call("run", append(tt.args, "--dry-run")) })
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("want %q in\n%s", w, out)
				}
			}
			if _, err := os.Stat("cnperf-results"); err == nil {
				t.Errorf("--dry-run made the results folder")
			}
		})
	}
}
