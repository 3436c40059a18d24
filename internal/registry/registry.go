// Package registry is the one name -> implementation table behind every
// pluggable seam (networks, workloads, load balancers, suites): each
// implementation registers itself from init(), and an unknown name gets an
// error that lists what exists, with the closest name when it looks
// misspelt (Suggest).
package registry

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// R maps names to values of one kind.
type R[T any] struct {
	kind string // "network", used in messages
	hint string // how to list them, e.g. "`cnperf networks` lists them"
	mu   sync.RWMutex
	m    map[string]T
}

// New returns an empty registry of a kind, with the hint an unknown name's
// error gives.
func New[T any](kind, hint string) *R[T] {
	return &R[T]{kind: kind, hint: hint, m: map[string]T{}}
}

// Register adds v under name; a duplicate panics (a programming error).
func (r *R[T]) Register(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		panic(fmt.Sprintf("registry: duplicate %s %q", r.kind, name))
	}
	r.m[name] = v
}

// Get finds name, or says which names exist.
func (r *R[T]) Get(name string) (T, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if v, ok := r.m[name]; ok {
		return v, nil
	}
	var zero T
	names := r.namesLocked()
	return zero, fmt.Errorf("unknown %s %q;%s %s (%s)", r.kind, name, Suggest(name, names), r.hint, strings.Join(names, ", "))
}

// Names lists the registered names, sorted.
func (r *R[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namesLocked()
}

func (r *R[T]) namesLocked() []string {
	n := make([]string, 0, len(r.m))
	for k := range r.m {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
