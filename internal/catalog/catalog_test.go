package catalog

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/golden"
	_ "github.com/cnperf/cnperf/internal/netmode/all" // the networks
)

// `cnperf networks -v` lists every network's options.
func TestNetworkOptions(t *testing.T) {
	var b strings.Builder
	NetworkOptions(&b)
	golden.Check(t, "networks-options", b.String())
}
