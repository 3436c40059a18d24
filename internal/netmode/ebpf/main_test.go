package ebpf_test

import (
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
)

// TestMain removes the cnperf binary the lab tests build.
func TestMain(m *testing.M) { labtest.Main(m) }
