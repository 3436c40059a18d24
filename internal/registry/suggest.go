package registry

import (
	"fmt"
	"strings"
)

// Suggest is " did you mean "X"?" for Closest(name, names), or "".
func Suggest(name string, names []string) string {
	if c := Closest(name, names); c != "" {
		return fmt.Sprintf(" did you mean %q?", c)
	}
	return ""
}

// Closest is the name of names a mistyped name most likely meant: the
// nearest within an edit or two (one for a name of four letters or less; a
// swap of neighbours counts one; ties go to the first in order), else one
// that begins with it or that it begins with (three letters at least); ""
// when none is, or when name is itself one of them.
func Closest(name string, names []string) string {
	best, bestD := "", 0
	for _, n := range names {
		if n == name {
			return ""
		}
		if d := distance(name, n); best == "" || d < bestD || (d == bestD && n < best) {
			best, bestD = n, d
		}
	}
	limit := 2
	if len([]rune(name)) <= 4 {
		limit = 1
	}
	if best != "" && bestD <= limit {
		return best
	}
	if len(name) >= 3 {
		for _, n := range names {
			if strings.HasPrefix(n, name) || strings.HasPrefix(name, n) && len(n) >= 3 {
				return n
			}
		}
	}
	return ""
}

// distance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of neighbours, each costing one.
func distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
