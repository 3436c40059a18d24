package ebpftc

import (
	"testing"

	"github.com/cnperf/cnperf/internal/svc/svctest"
)

func TestSpreadRoot(t *testing.T) { svctest.Spread(t, (&LB{}).Name()) }
