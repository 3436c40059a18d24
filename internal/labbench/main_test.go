package labbench

import (
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
)

func TestMain(m *testing.M) { labtest.Main(m) }
