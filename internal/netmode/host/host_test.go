package host_test

import (
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func TestLab(t *testing.T) { labtest.Mode(t, "host") }

func TestGolden(t *testing.T) { labtest.Golden(t, "host") }
