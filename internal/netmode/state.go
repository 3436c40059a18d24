package netmode

import (
	"fmt"
	"sync"

	"github.com/cnperf/cnperf/internal/lab"
)

// State is what a mode instance keeps about the lab it set up, S being the
// mode's own record (daemons, KV store, claimed blocks). An instance serves
// one lab at a time: Bind in Setup, Of in the other methods, and the lab's
// teardown unbinds it, so the instance may set up another lab afterwards.
// The zero value is ready to use.
type State[S any] struct {
	mu  sync.Mutex
	lab *lab.Lab
	st  *S
}

// Bind makes st the state of lab l. It fails while the instance still
// serves another lab: each live deployment needs its own instance (Get).
func (s *State[S]) Bind(mode string, l *lab.Lab, st *S) error {
	s.mu.Lock()
	if s.lab != nil && s.lab != l {
		other := s.lab.ID
		s.mu.Unlock()
		return fmt.Errorf("%s: this instance already serves lab %s; each deployment needs its own (netmode.Get)", mode, other)
	}
	first := s.lab == nil
	s.lab, s.st = l, st
	s.mu.Unlock()
	if first {
		l.OnTeardown(func() error { s.unbind(l); return nil })
	}
	return nil
}

// Of is the state of lab l, or nil when this instance has not set l up or
// l was torn down.
func (s *State[S]) Of(l *lab.Lab) *S {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lab != l {
		return nil
	}
	return s.st
}

func (s *State[S]) unbind(l *lab.Lab) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lab == l {
		s.lab, s.st = nil, nil
	}
}
