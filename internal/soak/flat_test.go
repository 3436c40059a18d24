package soak

import (
	"strings"
	"testing"
)

func TestFlat(t *testing.T) {
	leak := make([]float64, 30)
	steady := make([]float64, 30)
	for i := range leak {
		leak[i] = 20 + float64(i)     // one descriptor per round
		steady[i] = 20 + float64(i%3) // noise, no trend
	}
	cases := []struct {
		name    string
		samples []float64
		b       Bound
		err     string
	}{
		{"steady", steady, Bound{Abs: 2}, ""},
		{"leak", leak, Bound{Abs: 2}, "grew: median 24 in the first third, 44 in the last"},
		{"leak within a loose bound", leak, Bound{Rel: 1.5}, ""},
		{"memory settles after start", []float64{10, 30, 30, 31, 30, 29, 30, 30, 31}, Bound{Rel: 0.1}, ""},
		{"shrinks", []float64{9, 9, 9, 5, 5, 5}, Bound{}, ""},
		{"too few", []float64{1, 2, 3}, Bound{Abs: 100}, "at least 6"},
	}
	for _, c := range cases {
		err := Flat("fds", c.samples, c.b)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
}
