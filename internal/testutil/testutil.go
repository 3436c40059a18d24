// Package testutil is what the tests of every package share and that
// imports nothing of cnperf, so that any package's tests (package lab's
// included) can use it: skipping a test that needs root, with the reason.
package testutil

import (
	"os"
	"testing"
)

// DeferRootEnv, set to 1, makes NeedRoot skip even as root: scripts/test.sh
// runs every package's other tests first with it (its unit stage, in
// parallel, some with the race detector), then exactly the tests it
// skipped, as root, in its root integration stage. The skip's reason names
// the variable, which is how the script finds those tests.
const DeferRootEnv = "CNPERF_TEST_DEFER_ROOT"

// NeedRoot skips tb unless it runs as root; why says what the test needs
// root for ("it creates cgroups").
func NeedRoot(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv(DeferRootEnv) == "1" {
		tb.Skip("needs root: " + why + " (" + DeferRootEnv + "=1: run later, in scripts/test.sh's root stage)")
	}
	if os.Geteuid() != 0 {
		tb.Skip("needs root: " + why + " (run the tests as root)")
	}
}
