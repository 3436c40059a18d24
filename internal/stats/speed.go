package stats

import (
	"container/heap"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
)

// The machine's speed around each cell (result.MachineSpeed) as the
// comparisons use it. It has two parts: the share of the machine's CPU
// that other work and the hypervisor left the cell (measured over the
// cell), and the speed of the CPUs themselves (the probes before and
// after it: the copy between two CPUs where probed, else the spin work),
// against the fastest probe of the run. Which part a figure follows, and
// how closely, differs from figure to figure and machine to machine (a
// stream's throughput follows the share, its CPU cost per byte does not;
// docs/validation.md), so each figure's slope on each part is estimated
// from the run itself (speedSlopes), and a comparison pairs samples whose
// parts, weighted by those slopes, would move the figure by at most
// SpeedTolerance (pairBySpeed), and says how it paired them.

// SpeedTolerance is how much two samples' speeds may move a figure (by
// its slopes) and still count as one speed: 10 %, the size of the
// differences between networks cnperf must resolve, and its noise limit
// (NoisyCV).
const SpeedTolerance = 0.10

// MinSpeedPairs is how many same-speed pairs a comparison needs before it
// uses them instead of the rounds: a paired test on fewer has no spread.
const MinSpeedPairs = 3

// MinModeCells is how many cells with a witness a run needs before it is
// said to run at one or two distinct speeds.
const MinModeCells = 6

// Two modes are distinct when the slower is at most ModeGap of the faster
// and they are ModeSeparation pooled standard deviations apart (on the log
// scale): two clusters with nothing between them, not one spread.
const (
	ModeGap        = 0.8
	ModeSeparation = 4.0
)

// MinSlope is the smallest slope on a part of the speed a figure must
// show, at 2 standard errors or more, before that part counts in its
// comparisons: a figure that moves by less than 0.3 % per 1 % of speed
// is paired by round.
const MinSlope = 0.3

// speedAt is the machine's speed around one sample: the share of the CPU
// left to it and its CPUs' speed against the run's fastest probe (both
// in (0, 1]; zero: not recorded, or the probe's partner did not answer).
type speedAt struct{ share, probe float64 }

func (s speedAt) known() bool { return s.share > 0 }

func speedOf(r result.Result) speedAt {
	ms := r.MachineSpeed
	if ms == nil || ms.Share <= 0 {
		return speedAt{}
	}
	return speedAt{ms.Share, ms.Relative}
}

// probeSpeed is a result's probe speed before it is made relative to its
// run: 1/ns of the copy between two CPUs and of the spin work, each the
// mean over the probes before and after (0: none).
func probeSpeed(ms *result.MachineSpeed) (xfer, spin float64) {
	var xs, ss []float64
	for _, p := range []*result.SpeedProbe{ms.Before, ms.After} {
		if p == nil {
			continue
		}
		for _, pr := range p.Pairs {
			if pr.XferNs > 0 {
				xs = append(xs, pr.XferNs)
			}
		}
		for _, c := range p.CPUs {
			if c.CPU >= 0 && c.SpinNs > 0 {
				ss = append(ss, c.SpinNs)
			}
		}
	}
	if len(xs) > 0 {
		xfer = 1 / Mean(xs)
	}
	if len(ss) > 0 {
		spin = 1 / Mean(ss)
	}
	return xfer, spin
}

// Speeds are, by result index, the probes' speed against the fastest of
// the run (0 where a result has no witness) and the mode it ran at, and
// what the run shows of them.
type Speeds struct {
	Rel     []float64
	Mode    []string // ModeFast, ModeSlow or "" (one speed, or no witness)
	Summary *result.SpeedSummary
}

// The modes a result can be in.
const (
	ModeFast = "fast"
	ModeSlow = "slow"
)

// MinXferShare is the part of a run's results with a witness that must
// have a pair probe for the run's speeds to use it: a pair whose partner
// did not answer in time (a few in a hundred on a loaded machine) leaves
// that result's probe speed unknown rather than the whole run on the
// spin work.
const MinXferShare = 0.9

// SpeedsOf reads the witness of every result (errored ones included: a
// failed cell ran at a speed too) and makes the probes' speeds relative
// to the fastest: the copy between two CPUs where at least MinXferShare
// of the results with a witness have one (the rest unknown), else the
// spin work. Summary is nil when no result has a witness.
func SpeedsOf(rs []result.Result) Speeds {
	sp := Speeds{Rel: make([]float64, len(rs)), Mode: make([]string, len(rs))}
	xfer, spin := make([]float64, len(rs)), make([]float64, len(rs))
	has := make([]bool, len(rs))
	var maxXfer, maxSpin float64
	n, nXfer := 0, 0
	var shares []float64
	for i, r := range rs {
		if r.MachineSpeed == nil || r.MachineSpeed.Before == nil {
			continue
		}
		has[i] = true
		n++
		xfer[i], spin[i] = probeSpeed(r.MachineSpeed)
		maxXfer, maxSpin = math.Max(maxXfer, xfer[i]), math.Max(maxSpin, spin[i])
		if xfer[i] > 0 {
			nXfer++
		}
		if r.MachineSpeed.Share > 0 {
			shares = append(shares, r.MachineSpeed.Share)
		}
	}
	if n == 0 {
		return sp
	}
	useXfer := float64(nXfer) >= MinXferShare*float64(n)
	var rel []float64
	for i := range rs {
		switch {
		case !has[i]:
			continue
		case useXfer:
			if xfer[i] == 0 {
				continue
			}
			sp.Rel[i] = xfer[i] / maxXfer
		case maxSpin > 0 && spin[i] > 0:
			sp.Rel[i] = spin[i] / maxSpin
		default:
			continue
		}
		rel = append(rel, sp.Rel[i])
	}
	sum := &result.SpeedSummary{Cells: n, Tolerance: SpeedTolerance, Probe: "spin"}
	if useXfer {
		sum.Probe = "xfer"
	}
	if len(rel) > 0 {
		sum.Min, sum.Median = slices.Min(rel), Median(rel)
	}
	if len(shares) > 0 {
		sum.ShareMin, sum.ShareMedian = slices.Min(shares), Median(shares)
	}
	if m, ok := Modes(rel); ok {
		sum.Modes = []float64{1, m.Slow / m.Fast}
		for i := range sp.Rel {
			if sp.Rel[i] <= 0 {
				continue
			}
			sp.Mode[i] = ModeFast
			if sp.Rel[i] < m.Cut {
				sp.Mode[i] = ModeSlow
				sum.Slow++
			}
		}
	} else if len(rel) >= MinModeCells {
		sum.Modes = []float64{1}
	}
	sp.Summary = sum
	return sp
}

// TwoModes are two distinct speeds: each one's geometric mean, and the
// speed between them below which a sample is of the slow one.
type TwoModes struct {
	Fast, Slow, Cut float64
}

// Modes says whether speeds (> 0) fall in two distinct groups: the split
// of the sorted logarithms with the most variance between the groups
// (Otsu's), accepted when the slower group's geometric mean is at most
// ModeGap of the faster's and the two are ModeSeparation pooled standard
// deviations apart. ok is false for one speed, a continuous spread, or
// fewer than MinModeCells speeds.
func Modes(speeds []float64) (m TwoModes, ok bool) {
	if len(speeds) < MinModeCells || !allPositive(speeds) {
		return m, false
	}
	l := logs(speeds)
	slices.Sort(l)
	n := len(l)
	best, k := -1.0, 0
	total := 0.0
	for _, x := range l {
		total += x
	}
	left := 0.0 // the sum of l[:i], kept as i grows: n, not n², sums
	for i := 1; i < n; i++ {
		left += l[i-1]
		m1, m2 := left/float64(i), (total-left)/float64(n-i)
		if v := float64(i) * float64(n-i) * (m2 - m1) * (m2 - m1); v > best {
			best, k = v, i
		}
	}
	slow, fast := l[:k], l[k:]
	ms, mf := Mean(slow), Mean(fast)
	if math.Exp(ms-mf) > ModeGap {
		return m, false
	}
	var ss float64
	for _, x := range slow {
		ss += (x - ms) * (x - ms)
	}
	for _, x := range fast {
		ss += (x - mf) * (x - mf)
	}
	if sd := math.Sqrt(ss / float64(max(1, n-2))); sd > 0 && (mf-ms)/sd < ModeSeparation {
		return m, false
	}
	return TwoModes{Fast: math.Exp(mf), Slow: math.Exp(ms), Cut: math.Exp((slow[len(slow)-1] + fast[0]) / 2)}, true
}

// slope is how a figure follows the two parts of the machine's speed over
// a run: the least-squares slopes of log(figure) on log(share) and
// log(probe speed), within cells (each cell's own level taken out, so what
// a network costs does not count), their standard errors, and the samples
// and cells behind them. A slope that is small (MinSlope) or not told
// from 0 (under 2 standard errors) is 0 in use (eff).
type slope struct {
	share, probe     float64
	shareSE, probeSE float64
	n, cells, df     int
}

// eff are the slopes a comparison uses.
func (sl slope) eff() (share, probe float64) {
	use := func(b, se float64) float64 {
		if sl.df < 2 || math.Abs(b) < MinSlope || math.Abs(b) < 2*se {
			return 0
		}
		return b
	}
	return use(sl.share, sl.shareSE), use(sl.probe, sl.probeSE)
}

// follows says whether the figure follows either part of the speed.
func (sl slope) follows() bool {
	s, p := sl.eff()
	return s != 0 || p != 0
}

func (sl slope) String() string {
	return fmt.Sprintf("slope on the CPU share %.2f ± %.2f, on the probe %.2f ± %.2f, over %d samples of %d cells", sl.share, sl.shareSE, sl.probe, sl.probeSE, sl.n, sl.cells)
}

// moves is by how much (log) the figure moves between two speeds; +Inf
// where the figure follows the probe and a probe is unknown.
func (sl slope) moves(a, b speedAt) float64 {
	s, p := sl.eff()
	d := s * math.Log(a.share/b.share)
	if p != 0 {
		if a.probe <= 0 || b.probe <= 0 {
			return math.Inf(1)
		}
		d += p * math.Log(a.probe/b.probe)
	}
	return math.Abs(d)
}

// slopeKey groups the cells whose figure shares a slope: one workload,
// step and figure, over every network and placement of the run.
type slopeKey struct{ workload, step, figure string }

// speedSlopes estimates every figure's slopes from the run's samples that
// have a speed: a regression on both parts at once, or on the one that
// varies where the other does not.
func speedSlopes(c cells, figures func(string) []result.Figure) map[slopeKey]slope {
	type acc struct {
		// sums of products of the centred log share (s), probe (p) and
		// figure (y)
		ss, sp, pp, sy, py, yy float64
		n, cells               int
	}
	accs := map[slopeKey]*acc{}
	for _, k := range c.order {
		for _, f := range figuresOf(figures, k.Workload) {
			var xs, ps, ys []float64
			for _, s := range c.samples(k, f.Key) {
				if s.speed.known() && s.speed.probe > 0 && s.v > 0 {
					xs, ps, ys = append(xs, math.Log(s.speed.share)), append(ps, math.Log(s.speed.probe)), append(ys, math.Log(s.v))
				}
			}
			if len(xs) < 2 {
				continue
			}
			sk := slopeKey{k.Workload, k.Step, f.Key}
			a := accs[sk]
			if a == nil {
				a = &acc{}
				accs[sk] = a
			}
			mx, mp, my := Mean(xs), Mean(ps), Mean(ys)
			for i := range xs {
				dx, dp, dy := xs[i]-mx, ps[i]-mp, ys[i]-my
				a.ss, a.sp, a.pp = a.ss+dx*dx, a.sp+dx*dp, a.pp+dp*dp
				a.sy, a.py, a.yy = a.sy+dx*dy, a.py+dp*dy, a.yy+dy*dy
			}
			a.n += len(xs)
			a.cells++
		}
	}
	const tiny = 1e-12
	out := map[slopeKey]slope{}
	for sk, a := range accs {
		sl := slope{n: a.n, cells: a.cells}
		det := a.ss*a.pp - a.sp*a.sp
		switch {
		case a.ss > tiny && a.pp > tiny && det > tiny*(a.ss*a.pp):
			sl.df = a.n - a.cells - 2
			sl.share = (a.sy*a.pp - a.py*a.sp) / det
			sl.probe = (a.py*a.ss - a.sy*a.sp) / det
			rss := max(0, a.yy-sl.share*a.sy-sl.probe*a.py)
			if sl.df > 0 {
				v := rss / float64(sl.df)
				sl.shareSE, sl.probeSE = math.Sqrt(v*a.pp/det), math.Sqrt(v*a.ss/det)
			}
		case a.ss > tiny:
			sl.df = a.n - a.cells - 1
			sl.share = a.sy / a.ss
			if sl.df > 0 {
				sl.shareSE = math.Sqrt(max(0, a.yy-sl.share*a.sy) / float64(sl.df) / a.ss)
			}
		case a.pp > tiny:
			sl.df = a.n - a.cells - 1
			sl.probe = a.py / a.pp
			if sl.df > 0 {
				sl.probeSE = math.Sqrt(max(0, a.yy-sl.probe*a.py) / float64(sl.df) / a.pp)
			}
		}
		out[sk] = sl
	}
	return out
}

// sameSpeed says whether both parts of two speeds are within
// SpeedTolerance of each other, whatever a figure's slopes.
func sameSpeed(a, b speedAt) bool {
	lim := math.Log1p(SpeedTolerance)
	return a.probe > 0 && b.probe > 0 && math.Abs(math.Log(a.share/b.share)) <= lim && math.Abs(math.Log(a.probe/b.probe)) <= lim
}

func (s speedAt) String() string {
	if s.probe <= 0 {
		return fmt.Sprintf("share %.2f probe unknown", s.share)
	}
	return fmt.Sprintf("share %.2f probe %.2f", s.share, s.probe)
}

// pairBySpeed pairs cell a's samples with reference b's by the machine's
// speed where the figure follows it (sl): each round with the same round
// where the two speeds would move the figure by at most SpeedTolerance;
// the rest with the other's sample of the nearest such speed from any
// round. It returns the pairs to compare and how they were made; ok is
// false when either side has a sample without a round or a speed, or two
// in one round (then the caller pairs by round, as without a witness).
// A cell whose every round ran at the reference's speed is paired by
// round (SpeedSame), as is a figure that follows neither part of the
// speed (SpeedIndependent). With at least MinSpeedPairs same-speed pairs
// the method is SpeedMatched; with fewer, the rounds' pairs are returned
// with SpeedUnmatched and the reason.
func pairBySpeed(a, b []sample, sl slope) (x, y []float64, p result.SpeedPairing, ok bool) {
	ra, rb := map[int]sample{}, map[int]sample{}
	for _, side := range []struct {
		ss []sample
		m  map[int]sample
	}{{a, ra}, {b, rb}} {
		for _, s := range side.ss {
			if _, twice := side.m[s.round]; twice || s.round <= 0 || !s.speed.known() {
				return nil, nil, p, false
			}
			side.m[s.round] = s
		}
	}
	p.Tolerance = SpeedTolerance
	var rounds []int
	for r := range ra {
		if _, ok := rb[r]; ok {
			rounds = append(rounds, r)
		}
	}
	slices.Sort(rounds)
	p.Rounds = len(rounds)
	byRound := func() {
		for _, r := range rounds {
			x, y = append(x, ra[r].v), append(y, rb[r].v)
		}
		p.Pairs = len(rounds)
	}
	same := true
	for _, r := range rounds {
		same = same && sameSpeed(ra[r].speed, rb[r].speed)
	}
	switch {
	case same:
		byRound()
		p.Method = result.SpeedSame
		return x, y, p, true
	case !sl.follows():
		byRound()
		p.Method = result.SpeedIndependent
		p.Note = "paired by round: the figure does not follow the machine's speed in this run (" + sl.String() + ")"
		return x, y, p, true
	}
	lim := math.Log1p(SpeedTolerance)
	usedA, usedB := map[int]bool{}, map[int]bool{}
	type pair struct{ ra, rb int }
	var pairs []pair
	var differ []string
	for _, r := range rounds {
		if sl.moves(ra[r].speed, rb[r].speed) <= lim {
			pairs = append(pairs, pair{r, r})
			usedA[r], usedB[r] = true, true
		} else {
			differ = append(differ, fmt.Sprintf("round %d %s against the reference's %s", r, ra[r].speed, rb[r].speed))
		}
	}
	// the rest: nearest speeds first, across rounds
	var across []string
	for _, c := range nearestFirst(a, b, usedA, usedB, sl, lim) {
		usedA[c[0]], usedB[c[1]] = true, true
		pairs = append(pairs, pair{c[0], c[1]})
		across = append(across, fmt.Sprintf("its round %d with the reference's %d", c[0], c[1]))
	}
	if len(pairs) < MinSpeedPairs {
		byRound()
		p.Method = result.SpeedUnmatched
		p.Note = fmt.Sprintf("paired by round, mixing speeds: only %d pairs of samples ran at speeds close enough to move the figure by %.0f %% or less (%d needed; %s); by round, the speeds differ: %s",
			len(pairs), 100*SpeedTolerance, MinSpeedPairs, sl, strings.Join(differ, ", "))
		return x, y, p, true
	}
	slices.SortFunc(pairs, func(p, q pair) int { return p.ra - q.ra })
	for _, pr := range pairs {
		x, y = append(x, ra[pr.ra].v), append(y, rb[pr.rb].v)
	}
	p.Method, p.Pairs = result.SpeedMatched, len(pairs)
	p.Note = fmt.Sprintf("paired by speed (%s): %d pairs", sl, len(pairs))
	if len(across) > 0 {
		p.Note += ", " + strings.Join(across, ", ")
	}
	if len(differ) > 0 {
		p.Note += "; by round, the speeds differ: " + strings.Join(differ, ", ")
	}
	if l := unused(a, usedA); l != "" {
		p.Note += "; left out: its round " + l
		if l := unused(b, usedB); l != "" {
			p.Note += ", the reference's " + l
		}
	} else if l := unused(b, usedB); l != "" {
		p.Note += "; left out: the reference's round " + l
	}
	return x, y, p, true
}

// manyUnpaired is the number of candidate pairs (unpaired samples of a
// times those of b) above which nearestFirst pairs in sorted order
// (n log n) rather than sorting every pair (n², in time and memory: a
// cell of thousands of rounds, issue 34).
const manyUnpaired = 1 << 14

// nearestFirst pairs the samples of a and b not yet used, greedily,
// nearest speeds (by the figure's slopes) first, within lim: rounds (a's,
// b's). With few samples every pair is sorted (ties kept in the samples'
// order); with many, the figure's move between two speeds is a distance
// on one line (the slopes times the logs of the two parts), where the
// nearest remaining pair is always two neighbours in sorted order: a
// heap of neighbouring pairs gives the same greedy in n log n (ties
// between equal distances may pair differently).
func nearestFirst(a, b []sample, usedA, usedB map[int]bool, sl slope, lim float64) [][2]int {
	var fa, fb []sample
	for _, s := range a {
		if !usedA[s.round] {
			fa = append(fa, s)
		}
	}
	for _, s := range b {
		if !usedB[s.round] {
			fb = append(fb, s)
		}
	}
	var out [][2]int
	if len(fa)*len(fb) <= manyUnpaired {
		type cand struct {
			d      float64
			ra, rb int
		}
		var cands []cand
		for _, sa := range fa {
			for _, sb := range fb {
				if d := sl.moves(sa.speed, sb.speed); d <= lim {
					cands = append(cands, cand{d, sa.round, sb.round})
				}
			}
		}
		slices.SortStableFunc(cands, func(p, q cand) int { return cmpFloat(p.d, q.d) })
		ua, ub := map[int]bool{}, map[int]bool{}
		for _, c := range cands {
			if !ua[c.ra] && !ub[c.rb] {
				ua[c.ra], ub[c.rb] = true, true
				out = append(out, [2]int{c.ra, c.rb})
			}
		}
		return out
	}
	return nearestSorted(fa, fb, sl, lim)
}

// nearestSorted is nearestFirst's greedy for many samples: the samples
// on one line (pos), sorted, a linked list of those left and a heap of
// neighbouring pairs from different cells by distance.
func nearestSorted(fa, fb []sample, sl slope, lim float64) [][2]int {
	s, p := sl.eff()
	type pt struct {
		pos        float64
		round      int
		ofA        bool
		prev, next int
		gone       bool
	}
	var pts []pt
	for _, side := range []struct {
		ss  []sample
		ofA bool
	}{{fa, true}, {fb, false}} {
		for _, x := range side.ss {
			if p != 0 && x.speed.probe <= 0 {
				continue // moves is infinite: never paired
			}
			pos := s * math.Log(x.speed.share)
			if p != 0 {
				pos += p * math.Log(x.speed.probe)
			}
			pts = append(pts, pt{pos: pos, round: x.round, ofA: side.ofA})
		}
	}
	slices.SortStableFunc(pts, func(x, y pt) int { return cmpFloat(x.pos, y.pos) })
	for i := range pts {
		pts[i].prev, pts[i].next = i-1, i+1
	}
	h := &pairHeap{}
	push := func(i, j int) {
		if i >= 0 && j < len(pts) && pts[i].ofA != pts[j].ofA {
			heap.Push(h, heapPair{pts[j].pos - pts[i].pos, i, j})
		}
	}
	for i := 0; i+1 < len(pts); i++ {
		push(i, i+1)
	}
	var out [][2]int
	for h.Len() > 0 {
		c := heap.Pop(h).(heapPair)
		if pts[c.i].gone || pts[c.j].gone {
			continue
		}
		if c.d > lim {
			break
		}
		pts[c.i].gone, pts[c.j].gone = true, true
		l, r := pts[c.i].prev, pts[c.j].next
		if l >= 0 {
			pts[l].next = r
		}
		if r < len(pts) {
			pts[r].prev = l
		}
		push(l, r)
		ra, rb := pts[c.i].round, pts[c.j].round
		if !pts[c.i].ofA {
			ra, rb = rb, ra
		}
		out = append(out, [2]int{ra, rb})
	}
	return out
}

// heapPair is two neighbouring samples (indexes i < j) at distance d.
type heapPair struct {
	d    float64
	i, j int
}

type pairHeap []heapPair

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(a, b int) bool {
	if h[a].d != h[b].d {
		return h[a].d < h[b].d
	}
	return h[a].i < h[b].i
}
func (h pairHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(heapPair)) }
func (h *pairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// unmatched leaves a comparison whose samples could not be paired by
// speed undecided, whatever its interval: its ratio mixes the machine's
// speeds with the networks', and more rounds at mixed speeds would not
// decide it.
func unmatched(c *result.Comparison, sp *result.SpeedPairing) {
	if sp.Method != result.SpeedUnmatched {
		return
	}
	// more rounds at mixed speeds would not decide it: no round count,
	// whatever the verdict was
	c.RoundsNeeded = 0
	if c.Verdict == Undecided {
		return
	}
	c.Verdict, c.Significant = Undecided, false
	sp.Note += "; the verdict is undecided whatever the interval"
}

// unused lists the rounds of ss not in used ("2, 4").
func unused(ss []sample, used map[int]bool) string {
	var out []string
	for _, s := range ss {
		if !used[s.round] {
			out = append(out, fmt.Sprint(s.round))
		}
	}
	return strings.Join(out, ", ")
}

// SpeedNote is the noise line's sentence on the machine's speed: the CPU
// share other work left the cells, and the modes (or the spread) of the
// CPUs' own speed ("" without a witness).
func SpeedNote(s *result.SpeedSummary) string {
	if s == nil || s.Cells == 0 {
		return ""
	}
	share := ""
	if s.ShareMedian > 0 {
		share = fmt.Sprintf("other work left the cells %.0f %% of the CPUs (median; the least %.0f %%); ", 100*s.ShareMedian, 100*s.ShareMin)
	}
	what := "the CPUs' speed by the " + s.Probe + " probe"
	switch len(s.Modes) {
	case 2:
		return fmt.Sprintf("machine speed: %s%s: two machine speeds seen: 1.00 and %.2f, %d of %d cells slow", share, what, s.Modes[1], s.Slow, s.Cells)
	case 1:
		if s.Min >= 1/(1+SpeedTolerance) {
			return fmt.Sprintf("machine speed: %s%s: one speed over %d cells (the slowest %.2f)", share, what, s.Cells, s.Min)
		}
		return fmt.Sprintf("machine speed: %s%s: no distinct speeds, %.2f to 1.00 over %d cells (median %.2f)", share, what, s.Min, s.Cells, s.Median)
	}
	return fmt.Sprintf("machine speed: %s%s: %.2f to 1.00 over %d cells, too few to tell modes", share, what, s.Min, s.Cells)
}

// WarnSpeed starts the warning that names the comparisons whose samples
// could not be paired by speed.
const WarnSpeed = "machine speed: "

// applySpeeds writes each result's relative probe speed and mode and the
// run's summary of them.
func applySpeeds(run *result.Run) {
	sp := SpeedsOf(run.Results)
	for i := range run.Results {
		if ms := run.Results[i].MachineSpeed; ms != nil {
			ms.Relative, ms.Mode = sp.Rel[i], sp.Mode[i]
		}
	}
	run.MachineSpeed = sp.Summary
}

// speedWarning names the comparisons that could not pair samples of the
// same speed ("" for none).
func speedWarning(sums []result.Summary, figures func(string) []result.Figure) string {
	var names []string
	for _, s := range sums {
		if !hasRatio(s, figures) {
			continue // a figure printed without a ratio (p50, p99): its comparison is in the JSON only
		}
		if c := s.VsBaseline; c != nil && c.Speed != nil && c.Speed.Method == result.SpeedUnmatched {
			names = append(names, fmt.Sprintf("%s %s", CellName(s.Cell), figureLabel(s, figures)))
		}
	}
	if len(names) == 0 {
		return ""
	}
	what := fmt.Sprintf("%d ratios", len(names))
	if len(names) == 1 {
		what = "1 ratio"
	}
	return fmt.Sprintf("%s%s could not pair samples that ran at the same speed (within %.0f %%), so they mix the machine's speed with the networks': %s (each comparison's speed note in the JSON says which rounds and speeds); run more rounds (--repeat N) or stop other work on this machine",
		WarnSpeed, what, 100*SpeedTolerance, strings.Join(names, ", "))
}

// hasRatio says a summary's figure is one a table prints its ratio to
// the reference beside (result.Figure.Ratio).
func hasRatio(s result.Summary, figures func(string) []result.Figure) bool {
	for _, f := range figuresOf(figures, s.Cell.Workload) {
		if f.Key == s.Figure {
			return f.Ratio
		}
	}
	return false
}

// Minority is the mode fewer of a run's cells ran at ("slow" or "fast"),
// "" when the run did not run at two speeds.
func Minority(run *result.Run) string {
	s := run.MachineSpeed
	if s == nil || len(s.Modes) != 2 {
		return ""
	}
	if 2*s.Slow <= s.Cells {
		return ModeSlow
	}
	return ModeFast
}

// MinorityRounds counts, per cell, the rounds (results, failed ones
// included) that ran at the run's minority speed.
func MinorityRounds(run *result.Run) map[result.CellKey]int {
	m := Minority(run)
	if m == "" {
		return nil
	}
	out := map[result.CellKey]int{}
	for _, r := range run.Results {
		if r.MachineSpeed != nil && r.MachineSpeed.Mode == m {
			out[r.Key()]++
		}
	}
	return out
}

// SpeedNotes are the lines a report prints on the machine's speed: the
// noise line's sentence, and the cells measured at the minority speed.
func SpeedNotes(run *result.Run) []string {
	note := SpeedNote(run.MachineSpeed)
	if note == "" {
		return nil
	}
	out := []string{note}
	if m := Minority(run); m != "" {
		var cells []string
		counts := MinorityRounds(run)
		seen := map[result.CellKey]bool{}
		for _, r := range run.Results {
			k := r.Key()
			if counts[k] > 0 && !seen[k] {
				seen[k] = true
				cells = append(cells, fmt.Sprintf("%s (%d)", CellName(k), counts[k]))
			}
		}
		out = append(out, fmt.Sprintf("measured in rounds at the minority (%s) speed: %s", m, strings.Join(cells, ", ")))
	}
	return out
}
