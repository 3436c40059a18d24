package agent

import "time"

// SetGrace shortens Grace for a test.
func SetGrace(d time.Duration) (restore func()) {
	old := grace
	grace = d
	return func() { grace = old }
}

// Cause is the client's cause, for tests.
func (c *Client) Cause(err error, what string, within time.Duration) error {
	return c.cause(err, what, within)
}
