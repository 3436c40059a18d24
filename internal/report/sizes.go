package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/result"
)

// sizeOf reads the message size of a sweep's step ("size=1024", "size=1024
// flows=4"), 0 for a result not of a sweep (a load step "rate=R size=N"
// names a response size).
func sizeOf(step string) int {
	f := strings.Fields(step)
	if len(f) == 0 {
		return 0
	}
	v, ok := strings.CutPrefix(f[0], "size=")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(v)
	return n
}

// Sizes writes a message-size sweep as the paper's figure reads: a row per
// network, placement and workload, a column per size, each the median over
// rounds of the workload's main figure.
func Sizes(w io.Writer, run *result.Run) {
	type rowKey struct{ network, placement, workload string }
	var rows []rowKey
	vals := map[rowKey]map[int][]float64{}
	seen := map[int]bool{}
	var sizes []int
	for _, r := range run.Results {
		// a sweep's step names the message size its result was measured
		// at (a load step's size=N is a response size: not a sweep)
		n := sizeOf(r.Step)
		if n == 0 || r.Error != "" || fmt.Sprint(r.Params["message_size"]) != strconv.Itoa(n) {
			continue
		}
		v, ok := r.Metrics.Value(FiguresOf(r.Workload)[0].Key)
		if !ok {
			continue
		}
		k := rowKey{r.Network, r.Placement, r.Workload}
		if vals[k] == nil {
			vals[k] = map[int][]float64{}
			rows = append(rows, k)
		}
		vals[k][n] = append(vals[k][n], v)
		if !seen[n] {
			seen[n] = true
			sizes = append(sizes, n)
		}
	}
	if len(rows) == 0 {
		return
	}
	sort.Ints(sizes)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].workload < rows[j].workload })
	fmt.Fprintln(w, "\nby message size (bytes): each workload's main figure, medians over rounds")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "workload\tnetwork\tplacement"
	for _, s := range sizes {
		head += "\t" + strconv.Itoa(s)
	}
	fmt.Fprintln(tw, head)
	for _, k := range rows {
		f := FiguresOf(k.workload)[0]
		line := k.workload + " " + f.Label + "\t" + k.network + "\t" + k.placement
		for _, s := range sizes {
			if xs := vals[k][s]; len(xs) > 0 {
				line += "\t" + format(f, median(xs))
			} else {
				line += "\t-"
			}
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}
