package all_test

import (
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/netmode"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/tund"
)

// TestMain removes the cnperf binary the daemons' networks run.
func TestMain(m *testing.M) { labtest.Main(m) }

// TestNetlinkMatchesCommands builds every network this machine can build
// through netlink and again by running the commands it records: the same
// record, the same kernel state. Control planes are off where a network
// has one (the datapath is the same, built without waiting for daemons).
func TestNetlinkMatchesCommands(t *testing.T) {
	labtest.NeedRoot(t)
	tund.Binary = labtest.AgentBinary(t) // flannel-udp's and weave's datapath daemons
	t.Cleanup(func() { tund.Binary = "" })
	for _, name := range netmode.Names() {
		t.Run(name, func(t *testing.T) {
			m, _ := netmode.Get(name)
			opts := map[string]string{}
			for _, o := range netmode.OptionsOf(m) {
				if o.Name == "controlplane" {
					opts["controlplane"] = "off"
				}
			}
			labtest.NetlinkMatchesCommands(t, name, opts)
		})
	}
}
