package progress

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDisplay drives a display through a small run and compares every
// byte it wrote: off a terminal plain lines, on one a status line
// cleared before each progress line and redrawn after it.
func TestDisplay(t *testing.T) {
	const clr = "\r\033[K"
	tests := []struct {
		name string
		live bool
		want string
	}{
		{
			name: "log: the status as a line after each cell",
			want: "building x\n" +
				"  x tcp_rr 1 trans/s\n" +
				"[cell 1/2, round 1/2, 0:02 elapsed, ETA 14:00:03, 0:01 left]\n" +
				"  x tcp_rr 2 trans/s\n" +
				"[cell 2/2, round 2/2, 0:04 elapsed, ETA 14:00:04, 0:00 left]\n" +
				"table\n",
		},
		{
			name: "terminal: one status line kept below the progress lines",
			live: true,
			// plan: 2 x (1 s + 250 ms) + 500 ms build + 100 ms teardown
			want: clr + "[building 1/1, 0:00 elapsed, ETA 14:00:03, 0:03 left]" +
				clr + "building x\n" + clr + "[building 1/1, 0:00 elapsed, ETA 14:00:03, 0:03 left]" +
				clr + clr + "[building 1/1, 0:00 elapsed, ETA 14:00:03, 0:03 left]" + // Building
				clr + clr + "[building 1/1, 0:01 elapsed, ETA 14:00:04, 0:03 left]" + // Built, in 1 s
				clr + clr + "[cell 1/2, round 1/2, 0:01 elapsed, ETA 14:00:04, 0:03 left]" +
				clr + "  x tcp_rr 1 trans/s\n" + clr + "[cell 1/2, round 1/2, 0:02 elapsed, ETA 14:00:04, 0:02 left]" +
				clr + clr + "[cell 1/2, round 1/2, 0:02 elapsed, ETA 14:00:03, 0:01 left]" + // done: 1 s took 1 s, no set-up
				clr + clr + "[cell 2/2, round 2/2, 0:02 elapsed, ETA 14:00:03, 0:01 left]" +
				clr + "  x tcp_rr 2 trans/s\n" + clr + "[cell 2/2, round 2/2, 0:04 elapsed, ETA 14:00:04, 0:00 left]" +
				clr + clr + "[cell 2/2, round 2/2, 0:04 elapsed, ETA 14:00:04, 0:00 left]" + // CellDone
				clr + clr + "[cell 2/2, round 2/2, 0:04 elapsed, ETA 14:00:04, 0:00 left]" + // TornDown
				clr + "table\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFake()
			var out strings.Builder
			d := New(&out, tt.live, c.now)
			d.tick = time.Hour // no redraws by the ticker in the test
			d.Plan([][]time.Duration{{s}}, 2)
			fmt.Fprintf(d, "building x\n")
			d.Building()
			c.advance(s)
			d.Built()
			d.CellStart(1, s)
			c.advance(s)
			fmt.Fprintf(d, "  x tcp_rr 1 trans/s\n")
			d.CellDone(s)
			d.CellStart(2, s)
			c.advance(2 * s) // running late: nothing left of it
			fmt.Fprintf(d, "  x tcp_rr 2 trans/s\n")
			d.CellDone(s)
			d.TornDown()
			d.Finish()
			fmt.Fprintf(&out, "table\n")
			if got := out.String(); got != tt.want {
				t.Errorf("wrote\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestDisplayMidLine: a write that ends mid-line gets no status line
// under it until its line ends.
func TestDisplayMidLine(t *testing.T) {
	c := newFake()
	var out strings.Builder
	d := New(&out, true, c.now)
	d.tick = time.Hour
	d.Plan([][]time.Duration{{s}}, 1)
	out.Reset()
	fmt.Fprintf(d, "waiting for x...")
	if got := out.String(); got != "\r\033[Kwaiting for x..." {
		t.Fatalf("after a partial line: %q", got)
	}
	fmt.Fprintf(d, " ok\n")
	if got := out.String(); !strings.HasSuffix(got, " ok\n\r\033[K[building 1/1, 0:00 elapsed, ETA 14:00:02, 0:02 left]") {
		t.Fatalf("after the line ended: %q", got)
	}
	d.Finish()
}

// TestDisplayTicks: on a terminal the status line moves on its own.
func TestDisplayTicks(t *testing.T) {
	var out syncBuilder
	d := New(&out, true, nil)
	d.tick = 10 * time.Millisecond
	d.Plan([][]time.Duration{{s}}, 1)
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "[building") < 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	d.Finish()
	if n := strings.Count(out.String(), "[building"); n < 4 {
		t.Fatalf("%d status lines drawn in 5 s at a 10 ms tick", n)
	}
	after := out.String()
	time.Sleep(50 * time.Millisecond)
	if out.String() != after {
		t.Errorf("the ticker drew after Finish")
	}
	if !strings.HasSuffix(after, "\r\033[K") {
		t.Errorf("Finish left the status line on the screen: %q", after[max(0, len(after)-80):])
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Errorf("a file is taken for a terminal")
	}
}

// syncBuilder is a strings.Builder the test reads while the ticker writes.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuilder) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuilder) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
