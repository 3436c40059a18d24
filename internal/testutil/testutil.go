// Package testutil is what the tests of every package share and that
// imports nothing of cnperf, so that any package's tests (package lab's
// included) can use it: skipping a test that needs root, with the reason.
package testutil

import (
	"os"
	"testing"
)

// NeedRoot skips tb unless it runs as root; why says what the test needs
// root for ("it creates cgroups").
func NeedRoot(tb testing.TB, why string) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("needs root: " + why + " (run the tests as root)")
	}
}
