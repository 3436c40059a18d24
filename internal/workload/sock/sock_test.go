package sock

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAgain: a call interrupted by a signal is repeated until it returns
// anything else, which is passed on unchanged.
func TestAgain(t *testing.T) {
	for _, c := range []struct {
		name  string
		errs  []error // what the call returns, in turn
		calls int
		want  error
	}{
		{"done at once", []error{nil}, 1, nil},
		{"interrupted twice", []error{unix.EINTR, unix.EINTR, nil}, 3, nil},
		{"interrupted, then refused", []error{unix.EINTR, unix.ECONNREFUSED}, 2, unix.ECONNREFUSED},
		{"timed out", []error{unix.EAGAIN}, 1, unix.EAGAIN},
	} {
		calls := 0
		n, err := Again(func() (int, error) {
			e := c.errs[calls]
			calls++
			if e != nil {
				return -1, e
			}
			return 7, nil
		})
		if calls != c.calls || !errors.Is(err, c.want) || (c.want == nil && n != 7) {
			t.Errorf("%s: %d calls, (%d, %v); want %d calls, %v", c.name, calls, n, err, c.calls, c.want)
		}
	}
}
