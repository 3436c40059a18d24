package registry

import "fmt"

// Suggest is " did you mean "X"?" for the name of names closest to name,
// when it is close enough to be a misspelling (an edit or two, a swap of
// neighbours counting one), else "".
func Suggest(name string, names []string) string {
	best, bestD := "", 0
	for _, n := range names {
		d := distance(name, n)
		if best == "" || d < bestD {
			best, bestD = n, d
		}
	}
	limit := 2
	if len([]rune(name)) <= 4 {
		limit = 1
	}
	if best == "" || bestD > limit || best == name {
		return ""
	}
	return fmt.Sprintf(" did you mean %q?", best)
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
