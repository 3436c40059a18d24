package main

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/golden"
)

// `cnperf networks -v` lists every network's options.
func TestNetworkOptions(t *testing.T) {
	var b strings.Builder
	writeNetworkOptions(&b)
	golden.Check(t, "networks-options", b.String())
}
