package agent

import "time"

// SetGrace shortens Grace for a test.
func SetGrace(d time.Duration) (restore func()) {
	old := grace
	grace = d
	return func() { grace = old }
}
