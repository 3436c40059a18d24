package host_test

import (
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func TestLab(t *testing.T) { labrun.Mode(t, "host") }

func TestGolden(t *testing.T) { labtest.Golden(t, "host") }
