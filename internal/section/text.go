package section

import (
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
)

// TextTable starts a section's table under the main one: a blank line,
// its title, then a tab-aligned writer with the head written. The caller
// writes the rows and flushes it.
func TextTable(w io.Writer, title, head string) *tabwriter.Writer {
	fmt.Fprintln(w, "\n"+title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, head)
	return tw
}

// Rows keeps a section's rows by key, in the order their keys first came.
type Rows[K comparable, V any] struct {
	Keys []K
	by   map[K]*V
}

// Get returns k's row, made by init (the zero V when init is nil) the
// first time k comes.
func (r *Rows[K, V]) Get(k K, init func() V) *V {
	if v, ok := r.by[k]; ok {
		return v
	}
	if r.by == nil {
		r.by = map[K]*V{}
	}
	v := new(V)
	if init != nil {
		*v = init()
	}
	r.by[k] = v
	r.Keys = append(r.Keys, k)
	return v
}

// Of is k's row, nil when k never came.
func (r *Rows[K, V]) Of(k K) *V { return r.by[k] }

// All yields each key and its row, in the order the keys came.
func (r *Rows[K, V]) All() iter.Seq2[K, *V] {
	return func(yield func(K, *V) bool) {
		for _, k := range r.Keys {
			if !yield(k, r.by[k]) {
				return
			}
		}
	}
}

// Sweep gathers a table whose columns are the steps of a sweep (a
// message size, a count of idle pods): per row and column its values
// over the rounds, and per row each round's value at each column, to
// compare two columns paired by round.
type Sweep[K comparable] struct {
	rows   Rows[K, sweepRow]
	cols   []int
	hasCol map[int]bool
}

type sweepRow struct {
	vals    map[int][]float64
	byRound map[int]map[int]float64 // round -> column -> value
}

// Add records row k's value v at column col in round.
func (s *Sweep[K]) Add(k K, col, round int, v float64) {
	r := s.rows.Get(k, func() sweepRow {
		return sweepRow{vals: map[int][]float64{}, byRound: map[int]map[int]float64{}}
	})
	r.vals[col] = append(r.vals[col], v)
	if r.byRound[round] == nil {
		r.byRound[round] = map[int]float64{}
	}
	r.byRound[round][col] = v
	if !s.hasCol[col] {
		if s.hasCol == nil {
			s.hasCol = map[int]bool{}
		}
		s.hasCol[col] = true
		s.cols = append(s.cols, col)
	}
}

// Rows are the rows in the order they first came.
func (s *Sweep[K]) Rows() []K { return s.rows.Keys }

// Cols are the columns, in increasing order.
func (s *Sweep[K]) Cols() []int {
	c := slices.Clone(s.cols)
	sort.Ints(c)
	return c
}

// Head is the head's cells of the columns, each after a tab.
func (s *Sweep[K]) Head() string {
	var h string
	for _, c := range s.Cols() {
		h += "\t" + strconv.Itoa(c)
	}
	return h
}

// Medians are row k's cells, each after a tab: the median of its values
// at a column in f's unit, "-" where it has none.
func (s *Sweep[K]) Medians(k K, f result.Figure) string {
	var line string
	r := s.rows.Of(k)
	for _, c := range s.Cols() {
		if r != nil && len(r.vals[c]) > 0 {
			line += "\t" + Format(f, stats.Median(r.vals[c]))
		} else {
			line += "\t-"
		}
	}
	return line
}

// At is, for row k, each round's value at column a and at column b, of
// the rounds where both are above 0 (round -> value).
func (s *Sweep[K]) At(k K, a, b int) (x, y map[int]float64) {
	x, y = map[int]float64{}, map[int]float64{}
	r := s.rows.Of(k)
	if r == nil {
		return x, y
	}
	for round, m := range r.byRound {
		if m[a] > 0 && m[b] > 0 {
			x[round], y[round] = m[a], m[b]
		}
	}
	return x, y
}

// Paired compares x with y (round -> value) on the rounds both have,
// paired by round (stats.Paired).
func Paired(x, y map[int]float64, better result.Better) (result.Comparison, bool) {
	var rounds []int
	for r := range x {
		if _, ok := y[r]; ok {
			rounds = append(rounds, r)
		}
	}
	sort.Ints(rounds)
	var a, b []float64
	for _, r := range rounds {
		a, b = append(a, x[r]), append(b, y[r])
	}
	return stats.Paired(a, b, better, stats.Default)
}

// PairedRatio prints x against y paired by round (Paired) as Ratio
// does, "-" when there is nothing to compare.
func PairedRatio(x, y map[int]float64, better result.Better) string {
	c, ok := Paired(x, y, better)
	if !ok {
		return "-"
	}
	return Ratio(c)
}

// PairedFactor prints x against y paired by round (Paired) as Factor
// does, "-" when there is nothing to compare.
func PairedFactor(x, y map[int]float64, better result.Better) string {
	c, ok := Paired(x, y, better)
	if !ok {
		return "-"
	}
	return Factor(c)
}

// Factor prints a paired ratio of ratios (a share kept, a growth, against
// the baseline's) with its verdict's mark and its interval, without
// Ratio's "x": 0.52 [0.47, 0.58], =1.01 [0.98, 1.03].
func Factor(c result.Comparison) string {
	s := fmt.Sprintf("%.2f", c.Ratio)
	if c.CILevel > 0 {
		s += fmt.Sprintf(" [%.2f, %.2f]", c.CILow, c.CIHigh)
	}
	return VerdictMark(c) + s
}

// Percent prints a ratio as a change in percent, conv turning a ratio
// into one, each number by verb ("%.1f", "%+.1f"): the change, its
// interval low to high, and its verdict's mark.
func Percent(c result.Comparison, conv func(float64) float64, verb string) string {
	s := fmt.Sprintf(verb+"%%", conv(c.Ratio))
	if c.CILevel > 0 {
		lo, hi := conv(c.CILow), conv(c.CIHigh)
		s += fmt.Sprintf(" ["+verb+", "+verb+"]", math.Min(lo, hi), math.Max(lo, hi))
	}
	return VerdictMark(c) + s
}
