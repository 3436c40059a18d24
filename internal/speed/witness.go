package speed

import (
	"os"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
)

// userHZ is the unit of /proc/stat's times.
const userHZ = 100

// Witness is one cell's probes: Start before the measured interval, Stop
// after it.
type Witness struct {
	cpus  []int
	out   result.MachineSpeed
	ticks map[int]Ticks
}

// Start records the load, probes the CPUs and reads their times.
func Start() *Witness {
	w := &Witness{cpus: OnlineCPUs()}
	w.out.Load1 = load1()
	w.out.Before = Probe(w.cpus)
	w.ticks = ReadTicks()
	return w
}

// Stop reads the CPUs' times and probes them again. Share is left to
// SetShare, which needs the cell's own CPU time.
func (w *Witness) Stop() *result.MachineSpeed {
	if w == nil {
		return nil
	}
	t1 := ReadTicks()
	if w.ticks != nil && t1 != nil {
		for _, c := range w.cpus {
			w.out.StealS = append(w.out.StealS, (t1[c].Steal-w.ticks[c].Steal)/userHZ)
		}
	}
	w.out.After = Probe(w.cpus)
	return &w.out
}

// SetShare sets ms.Share from the cell's CPU cost: the machine's busy time
// less the cell's own is other work's, and steal is the hypervisor's.
func SetShare(ms *result.MachineSpeed, c *result.CPUCost) {
	if ms == nil || c == nil || c.WallS <= 0 || ms.Before == nil || len(ms.Before.CPUs) == 0 {
		return
	}
	own := c.AgentsS
	if c.CellS != nil {
		own = *c.CellS
	}
	var steal float64
	for _, s := range ms.StealS {
		steal += s
	}
	capacity := float64(len(ms.Before.CPUs)) * c.WallS
	// at least 0.01: 0 would read as not recorded (a cell always gets
	// some CPU, and /proc/stat counts in 10 ms ticks)
	ms.Share = min(1, max(0.01, 1-(max(0, c.MachineS-own)+steal)/capacity))
}

func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
