package netmode_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/calicobgp"
	"github.com/cnperf/cnperf/internal/netmode/dockeroverlay"
	"github.com/cnperf/cnperf/internal/netmode/flanneludp"
)

// A control plane switched off is not required: a machine without etcd or
// BIRD can build these modes with controlplane=off, and is told what to
// install otherwise.
func TestControlPlaneOffNeedsNoControlPlane(t *testing.T) {
	missing := map[string]bool{"etcd": true, "etcdctl": true, "bird": true, "birdc": true}
	lookPath := func(c string) (string, error) {
		if missing[c] {
			return "", errors.New("not found")
		}
		return "/usr/bin/" + c, nil
	}
	k := netmode.KernelConfig{} // unknown: every option counts as present
	for _, c := range []struct {
		mode netmode.Mode
		want string // in the error with the control plane on
	}{
		{&dockeroverlay.Mode{}, "etcd"},
		{&flanneludp.Mode{}, "etcd"},
		{&calicobgp.Mode{}, "bird"},
	} {
		err := netmode.CheckOptsWith(c.mode, nil, k, lookPath)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "apt-get install") {
			t.Errorf("%s, control plane on, without %s: %v", c.mode.Name(), c.want, err)
		}
		if err := netmode.CheckOptsWith(c.mode, map[string]string{"controlplane": "off"}, k, lookPath); err != nil {
			t.Errorf("%s, controlplane=off: %v", c.mode.Name(), err)
		}
	}
}
