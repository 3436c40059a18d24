package labtest_test

import (
	"flag"
	"testing"

	_ "github.com/cnperf/cnperf/internal/labtest"
	_ "github.com/cnperf/cnperf/internal/svc/svctest"
)

// A test binary holding both golden helpers defines -update once (it used
// to panic at start-up with "flag redefined: update").
func TestOneUpdateFlag(t *testing.T) {
	if flag.Lookup("update") == nil {
		t.Fatal("no -update flag")
	}
}
